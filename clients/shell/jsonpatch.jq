# RFC 6902 JSON Patch for jq: `apply_patch($ops)` applied to the document.
# RFC 6901 pointers: "" is the whole document, "~1" is "/", "~0" is "~", "-" appends to an array.
# A failing operation (missing path, failed test) raises an error, so the caller can resynchronise.

def pointer_tokens:
  if . == "" then []
  elif startswith("/") then .[1:] | split("/") | map(gsub("~1"; "/") | gsub("~0"; "~"))
  else error("invalid JSON pointer: \(.)")
  end;

# The jq path for the pointer's tokens in `$doc`: array indices become numbers, "-" the array's length.
def resolve_path($doc; $tokens; $for_add):
  reduce range(0; $tokens | length) as $i ({path: [], node: $doc};
    $tokens[$i] as $token
    | if (.node | type) == "array" then
        (if $token == "-" and $for_add and $i == ($tokens | length) - 1 then (.node | length)
         elif ($token | test("^(0|[1-9][0-9]*)$")) then ($token | tonumber)
         else error("bad array index \($token)") end) as $index
        | if $index > (.node | length) or ($index == (.node | length) and ($for_add | not))
             or ($index == (.node | length) and $i < ($tokens | length) - 1)
          then error("index \($index) out of range") else . end
        | {path: (.path + [$index]), node: .node[$index]}
      elif (.node | type) == "object" then
        if ($i < ($tokens | length) - 1 or ($for_add | not)) and (.node | has($token) | not)
        then error("no member \($token)") else . end
        | {path: (.path + [$token]), node: .node[$token]}
      else error("cannot index \(.node | type) with \($token)")
      end)
  | .path;

def patch_add($path; $value):
  if ($path | length) == 0 then $value
  else getpath($path[:-1]) as $parent
    | if ($parent | type) == "array"
      then setpath($path[:-1]; $parent[:$path[-1]] + [$value] + $parent[$path[-1]:])
      else setpath($path; $value) end
  end;

def patch_remove($path):
  if ($path | length) == 0 then error("cannot remove the whole document") else delpaths([$path]) end;

def apply_op($op):
  . as $doc
  | ($op.path | pointer_tokens) as $tokens
  | if $op.op == "add" then patch_add(resolve_path($doc; $tokens; true); $op.value)
    elif $op.op == "remove" then patch_remove(resolve_path($doc; $tokens; false))
    elif $op.op == "replace" then
      resolve_path($doc; $tokens; false) as $p
      | if ($p | length) == 0 then $op.value else setpath($p; $op.value) end
    elif $op.op == "move" then
      ($op.from | pointer_tokens) as $from
      | getpath(resolve_path($doc; $from; false)) as $value
      | patch_remove(resolve_path($doc; $from; false))
      | patch_add(resolve_path(.; $tokens; true); $value)
    elif $op.op == "copy" then
      getpath(resolve_path($doc; $op.from | pointer_tokens; false)) as $value
      | patch_add(resolve_path($doc; $tokens; true); $value)
    elif $op.op == "test" then
      if getpath(resolve_path($doc; $tokens; false)) == $op.value then .
      else error("test failed at \($op.path)") end
    else error("unknown op \($op.op)")
    end;

def apply_patch($ops): reduce $ops[] as $op (.; apply_op($op));
