#!/usr/bin/env bash
# The generated shell completions (scripts/gen-completion) against the binary they came from:
# bash completes subcommands, each subcommand's options as its --help lists them, and files after
# an option that takes a value; the zsh function parses (zsh -n) and names every subcommand.
#
#   completion_test.sh MMPROF_EXE BASH_COMPLETION ZSH_COMPLETION
set -euo pipefail
exe=$1 bash_file=$2 zsh_file=$3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# complete WORDS...: what bash offers for the last word.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _mmprof
           printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_file" "$@"
}

[[ $(complete_words mmprof bas) == baseline ]] || fail "'mmprof bas' does not complete to baseline"
subcommands=$("$(dirname "$0")/../../scripts/mmprof-subcommands" "$exe")
for sub in $subcommands; do
  # Every long option of the subcommand's help, offered after "--".
  want=$("$exe" "$sub" --help | grep -oE '^  (-[a-z],)?--[a-z0-9-]+' | sed 's/.*--/--/' | sort)
  got=$(complete_words mmprof "$sub" -- | grep -- '^--' | sort || true)
  [[ $want == "$got" ]] || fail "mmprof $sub: options offered differ from --help: $(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/gate.yaml"
[[ $(complete_words mmprof report --gate "$tmp/ga") == "$tmp/gate.yaml" ]] ||
  fail "a file is not offered after 'report --gate'"

if command -v zsh >/dev/null; then
  zsh -n "$zsh_file" || fail "$zsh_file does not parse in zsh"
  for sub in $subcommands; do
    grep -q "^    $sub)" "$zsh_file" || fail "$zsh_file has no case for $sub"
  done
else
  echo "zsh not installed: the zsh completion's syntax is not checked"
fi
echo "PASS: completions of $(echo $subcommands | wc -w) subcommands"
