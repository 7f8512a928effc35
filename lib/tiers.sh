# shellcheck shell=bash
# lib/tiers.sh — which TAP files run on which major (test/tap/tiers), for
# test/run-all, test/matrix and test/lint/run. Source it from the top of
# the tree; it defines:
#
#   tier_files [TIERS]   the TAP files of the comma-separated TIERS (every
#                        file without TIERS), the longest first by the
#                        file's SECONDS; then, in name order, the files of
#                        test/tap/ with no line in test/tap/tiers (they run
#                        wherever TAP runs, and the lint fails on them)
#   tiers_of_major MAJOR MAJORS
#                        the tiers that run on MAJOR in a run of the
#                        comma-separated MAJORS: every,ends,oldest on the
#                        oldest, every,ends on the newest, every on the others
#   tiers_check          every file of test/tap/*.pl on one line of a known
#                        tier with its seconds, and every line a file; one
#                        line per problem, saying what to write where

SHARDID_TIERS_FILE=test/tap/tiers
SHARDID_TIERS='every ends oldest'

# tiers_lines — the lines of test/tap/tiers without comments: FILE TIER SECONDS WHAT.
tiers_lines() { grep -v -e '^#' -e '^[[:space:]]*$' "$SHARDID_TIERS_FILE"; }

tier_files() {
	local want=${1:-} name tier secs f placed
	placed=" $(tiers_lines | awk '{ print $1 }' | xargs) "
	while read -r name tier secs _; do
		[ -e "test/tap/$name" ] || continue
		[ -z "$want" ] || [[ ",$want," == *",$tier,"* ]] || continue
		echo "$secs test/tap/$name"
	done < <(tiers_lines) | sort -s -k1,1rn | cut -d' ' -f2
	for f in test/tap/*.pl; do
		[ -e "$f" ] || continue
		[[ "$placed" == *" $(basename "$f") "* ]] || echo "$f"
	done
}

tiers_of_major() {
	local m=$1 o oldest=$1 newest=$1
	for o in ${2//,/ }; do
		[ "$o" -ge "$oldest" ] || oldest=$o
		[ "$o" -le "$newest" ] || newest=$o
	done
	if [ "$m" = "$oldest" ]; then
		echo every,ends,oldest
	elif [ "$m" = "$newest" ]; then
		echo every,ends
	else
		echo every
	fi
}

tiers_check() {
	local name tier secs what f bad=0 seen=' '
	while read -r name tier secs what; do
		if [[ "$seen" == *" $name "* ]]; then
			echo "$SHARDID_TIERS_FILE: $name has two lines; keep one"
			bad=1
		fi
		seen+="$name "
		if [ ! -e "test/tap/$name" ]; then
			echo "$SHARDID_TIERS_FILE: $name is no file of test/tap/; remove its line (or rename it with the file)"
			bad=1
		fi
		if [[ " $SHARDID_TIERS " != *" $tier "* ]] || ! [[ "$secs" =~ ^[0-9]+$ ]] || [ -z "$what" ]; then
			echo "$SHARDID_TIERS_FILE: the line of $name is not 'FILE TIER SECONDS WHAT' with TIER one of: $SHARDID_TIERS"
			bad=1
		fi
	done < <(tiers_lines)
	for f in test/tap/*.pl; do
		[ -e "$f" ] || continue
		f=$(basename "$f")
		[[ "$seen" == *" $f "* ]] && continue
		printf '%s: %s has no line; add one under the last line of %s, such as\n    %-27s %-7s %-4s %s\n' \
			"test/tap/$f" "$f" "$SHARDID_TIERS_FILE" "$f" ends 60 'what it tests of a major'
		echo "  (every: what differs between majors; ends: on the oldest and newest major; oldest: there only; seconds: the file alone, prove --timer)"
		bad=1
	done
	[ $bad = 0 ] || return 1
	echo "$SHARDID_TIERS_FILE: $(tiers_lines | wc -l) TAP files, each in one tier"
}
