#!/usr/bin/env bash
# The generated shell completions (scripts/gen-completion) against the binary they came from:
# bash completes subcommands, each subcommand's options as its --help lists them, files after an
# option that takes a value, an enumerated option's values, and --set's keys and their values;
# the zsh function parses (zsh -n), names every subcommand and completes --set.
#
# The man page (scripts/gen-man) renders without a groff warning and holds the sections of a man
# page, every subcommand with each of its options, every configuration key and every exit code.
#
#   completion_test.sh MMPROF_EXE BASH_COMPLETION ZSH_COMPLETION MAN_PAGE
set -euo pipefail
exe=$1 bash_file=$2 zsh_file=$3 man_page=$4
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

# A flag is no option taking a value, though its help says "Excludes: --by-count".
[[ $(complete_words mmprof shard --by-size --by | sort | tr '\n' ' ') == "--by-count --by-size " ]] ||
  fail "'shard --by-size --by' does not offer the options (--by-size taken as valued?)"
# An enumerated option's values, per subcommand (gen and shard spell --layout differently).
[[ $(complete_words mmprof gen --layout b) == both ]] || fail "'gen --layout b' does not give both"
[[ $(complete_words mmprof shard --layout a) == auto ]] || fail "'shard --layout a' does not give auto"
# --set: the keys of mmprof inspect --keys, then a key's values, in the word forms bash gives
# (split at "=", or whole under bash-completion's _init_completion -n =).
[[ $(complete_words mmprof baseline --set data.lay) == data.layout= ]] ||
  fail "'--set data.lay' does not complete to data.layout="
keys_offered=$(complete_words mmprof ab --set "" | wc -l)
[[ $keys_offered == $("$exe" inspect --keys | wc -l) ]] ||
  fail "'--set ' offers $keys_offered keys, mmprof inspect --keys lists $("$exe" inspect --keys | wc -l)"
for words in "data.layout = t" "data.layout=t"; do
  # shellcheck disable=SC2086 # the words are split on purpose
  [[ $(complete_words mmprof baseline --set $words | tr '\n' ' ') == "tar tar_stream " ]] ||
    fail "'--set $words' does not offer tar and tar_stream"
done
[[ $(complete_words mmprof baseline --set loader.pin_memory = | tr '\n' ' ') == "auto true false " ]] ||
  fail "'--set loader.pin_memory=' does not offer auto, true and false"
[[ $(complete_words mmprof baseline --set loader.shuffle = f) == false ]] ||
  fail "'--set loader.shuffle=f' does not offer false"

if command -v zsh >/dev/null; then
  zsh -n "$zsh_file" || fail "$zsh_file does not parse in zsh"
  for sub in $subcommands; do
    grep -q "^    $sub)" "$zsh_file" || fail "$zsh_file has no case for $sub"
  done
  grep -q "^      data.layout) compadd -- auto files tar tar_stream ;;" "$zsh_file" ||
    fail "$zsh_file does not complete data.layout's values"
  grep -q "'\*--set\[.*:key=value:_mmprof_set'" "$zsh_file" || fail "$zsh_file: --set has no key completion"
else
  echo "zsh not installed: the zsh completion's syntax is not checked"
fi

warnings=$(groff -man -ww -z "$man_page" 2>&1)
[[ -z $warnings ]] || fail "groff warns about $man_page: $warnings"
page=$(MANWIDTH=200 man -l "$man_page" 2>/dev/null)
for section in NAME SYNOPSIS DESCRIPTION COMMANDS CONFIGURATION "EXIT STATUS" ENVIRONMENT FILES \
  EXAMPLES "SEE ALSO"; do
  grep -qx "$section" <<<"$page" || fail "the man page has no section $section"
done
for sub in $subcommands; do
  grep -qx "   mmprof $sub" <<<"$page" || fail "the man page has no subsection for mmprof $sub"
  # Each long option of the subcommand, in its subsection (up to the next one).
  options=$(awk -v s="   mmprof $sub" '$0 == s { on = 1; next } on && /^   mmprof / { exit } on' <<<"$page")
  for option in $("$exe" "$sub" --help | grep -oE '^  (-[a-z],)?--[a-z0-9-]+' | sed 's/.*--/--/'); do
    [[ $option == --help ]] && continue
    grep -qE -- "(^|[ ,])$option( |$)" <<<"$options" || fail "the man page's mmprof $sub lacks $option"
  done
done
while IFS=$'\t' read -r key _; do
  grep -qx "       $key" <<<"$page" || fail "the man page's CONFIGURATION lacks $key"
done < <("$exe" inspect --keys)
for code in 0 1 2 3 4 5 6 130; do
  grep -qE "^       $code +[a-z]" <<<"$page" || fail "the man page's EXIT STATUS lacks $code"
done
echo "PASS: completions of $(echo $subcommands | wc -w) subcommands; the man page"
