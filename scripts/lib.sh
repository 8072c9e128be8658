# Helpers the project's scripts share: installing what is missing, building the server, Python venvs.
# Source it (bash): . "$repo/scripts/lib.sh"

# install_debian_packages PACKAGE...: installs those of the packages dpkg does not know yet, with sudo
# unless root. Fails when apt-get fails.
install_debian_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    echo "installing ${missing[*]}" >&2
    local sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq >&2 &&
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
}

# build_server REPO: the debug build of the server, the one `swift build` and `swift test` share.
build_server() {
    echo "building the server (swift build --product storefront)" >&2
    (cd "$1" && swift build --product storefront >&2)
}

# build_server_unless_built REPO: build_server, unless STOREFRONT_BIN is set or a debug or release build
# of the server exists.
build_server_unless_built() {
    if [ -n "${STOREFRONT_BIN:-}" ] || [ -x "$1/.build/debug/storefront" ] || [ -x "$1/.build/release/storefront" ]; then
        return 0
    fi
    build_server "$1"
}

# python_venv VENV REQUIREMENTS [PROJECT]: makes VENV when missing and installs REQUIREMENTS (and PROJECT,
# a folder with a pyproject.toml, in editable mode) when they changed since the last install.
python_venv() {
    local venv=$1 requirements=$2 project=${3:-}
    local inputs=("$requirements")
    [ -z "$project" ] || inputs+=("$project/pyproject.toml")
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    if cat "${inputs[@]}" | cmp -s - "$venv/.requirements"; then
        return 0
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    [ -z "$project" ] || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$project"
    cat "${inputs[@]}" > "$venv/.requirements"
}
