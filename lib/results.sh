# shellcheck shell=bash
# lib/results.sh — the line every suite and lint check ends with, and the
# table test/matrix makes of those lines (test/run-all, test/lint/run,
# test/matrix). Source it; it defines:
#
#   result NAME OUTCOME SECONDS
#       prints "result: NAME OUTCOME (SECONDS s)"; OUTCOME is ok, FAILED or
#       "skipped (why)", e.g. "result: pg_regress ok (34 s)".
#   result_table LABEL LOG
#       one table row per "result:" line of LOG: LABEL, the suite, its
#       seconds, its outcome. Adds each ok to results_passed and each
#       failure to results_failed (a skipped suite counts as neither).

results_passed=0
results_failed=0

result() { echo "result: $1 $2 ($3 s)"; }

result_table() {
	local label=$1 log=$2 line secs outcome
	while IFS= read -r line; do
		secs=
		if [[ "$line" =~ ^(.*)\ \(([0-9]+)\ s\)$ ]]; then
			line=${BASH_REMATCH[1]}
			secs="${BASH_REMATCH[2]} s"
		fi
		[[ "$line" =~ ^(.*)\ (ok|FAILED|skipped.*)$ ]] || continue
		outcome=${BASH_REMATCH[2]}
		printf '%-6s %-32s %7s  %s\n' "$label" "${BASH_REMATCH[1]}" "${secs:--}" "$outcome"
		case $outcome in
			ok) results_passed=$((results_passed + 1)) ;;
			skipped*) ;;
			*) results_failed=$((results_failed + 1)) ;;
		esac
	done < <(sed -n 's/^result: //p' "$log")
}
