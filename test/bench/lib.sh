# lib.sh - helpers the benchmarks in test/bench share; sourced, not run.

# json_field KEY JSON: the first number given for "KEY" in the JSON text, empty when none.
json_field() {
	sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" <<<"$2" | head -n 1
}
