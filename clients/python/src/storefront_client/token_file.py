"""A session token kept in a file of the caller's choosing, readable by its owner only (0600).

The file holds the token alone on one line (`sft_...`), the format the shell client keeps too, so either
client can resume a session the other signed in. It never holds a password.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def default_token_file() -> Path:
    """`$STOREFRONT_TOKEN_FILE`, else `$XDG_DATA_HOME/storefront/token` (`~/.local/share/storefront/token`)."""
    explicit = os.environ.get("STOREFRONT_TOKEN_FILE")
    if explicit:
        return Path(explicit)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "storefront" / "token"


def read_token(path: str | os.PathLike[str]) -> str | None:
    """The token kept in `path`, or `None` when there is none (no file, or an empty one)."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def write_token(path: str | os.PathLike[str], token: str) -> None:
    """Keeps `token` in `path`, created 0600 (its folder 0700 when made here), replaced atomically: the
    token is written to a new 0600 file beside it, which is then renamed over the old one, so no reader
    ever sees a half-written token and no other user can ever read it."""
    target = Path(path)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=".token-", dir=target.parent)  # mkstemp makes it 0600
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(token + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_token(path: str | os.PathLike[str]) -> bool:
    """Forgets the token kept in `path`; returns whether there was one."""
    try:
        Path(path).unlink()
        return True
    except FileNotFoundError:
        return False
