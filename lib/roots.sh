# shellcheck shell=bash
# lib/roots.sh — Debian root filesystems that carry other PostgreSQL majors
# (test/matrix, the tests across majors, bench/run-majors; lib/server.sh
# starts servers inside them). Source it; it defines:
#
#   root_suite MAJOR      the Debian suite whose archive has that major
#   root_dir MAJOR        where its root lives (cached across runs)
#   root_ensure MAJOR     debootstrap the root once, with this machine's own
#                         Debian mirror (read from its apt sources)
#   root_enter MAJOR      mount /proc and bind /dev into the root; they are
#                         unmounted by root_leave_all (an EXIT trap)
#   root_run MAJOR CMD... run a command inside the entered root
#   root_copy_checkout MAJOR [DIR]
#                         a fresh copy of this checkout (tracked and
#                         untracked, not ignored files) at DIR inside the
#                         root (/build/shardid)
#   root_leave_all
#
# The host is Debian 12 with PostgreSQL 15 (a bookworm root carries it too,
# for work that must not touch the host's installation); 17 comes from
# trixie, 18 from forky, and 19 shares the forky root: its packages come
# from whichever of forky, unstable and experimental offers the highest
# version apt can install, and nothing else comes from unstable or
# experimental. A testing suite moves only when its packages install
# together; sid alone breaks during transitions (a perl transition made
# postgresql-common uninstallable there in November 2026). Release files of
# a testing suite can be past Valid-Until, so apt inside a root does not
# check it.

SHARDID_ROOTS=${SHARDID_ROOTS:-/var/cache/shardid/roots}
SHARDID_ENTERED=()

root_suite() {
	case "$1" in
		15) echo bookworm ;;
		17) echo trixie ;;
		18 | 19) echo forky ;;
		*) echo "no Debian root carries PostgreSQL $1" >&2; return 1 ;;
	esac
}

root_dir() {
	local suite
	suite=$(root_suite "$1") || return 1
	echo "$SHARDID_ROOTS/$suite"
}

# The Debian archive this machine's apt uses (deb822 .sources or one-line
# sources.list); never a host name written into the repository.
host_debian_mirror() {
	local uri
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' |
		grep -E '/debian/?$' | head -n 1)
	if [ -z "$uri" ]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { print $i; break } }' |
			grep -E '/debian/?$' | head -n 1)
	fi
	[ -n "$uri" ] || { echo "no Debian mirror in /etc/apt/sources*" >&2; return 1; }
	echo "${uri%/}"
}

root_ensure() {
	local major=$1 suite dir mirror script=()
	suite=$(root_suite "$major") || return 1
	dir=$(root_dir "$major")
	if [ ! -e "$dir/.shardid-bootstrapped" ]; then
		command -v debootstrap >/dev/null ||
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; } ||
			return 1
		mirror=$(host_debian_mirror) || return 1
		# bookworm's debootstrap knows trixie; later suites use sid's script
		[ -e "/usr/share/debootstrap/scripts/$suite" ] || script=(/usr/share/debootstrap/scripts/sid)
		echo "debootstrap $suite into $dir (PostgreSQL $major)"
		rm -rf "$dir"
		mkdir -p "$dir"
		debootstrap --variant=minbase "$suite" "$dir" "$mirror" "${script[@]}" >"$dir.debootstrap.log" 2>&1 ||
			{ tail -n 20 "$dir.debootstrap.log" >&2; return 1; }
		touch "$dir/.shardid-bootstrapped"
	fi
	printf 'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n' \
		>"$dir/etc/apt/apt.conf.d/90shardid"
	# a root is a few GB; the downloaded .debs need not stay
	echo 'APT::Keep-Downloaded-Packages "false";' >"$dir/etc/apt/apt.conf.d/91shardid-nokeep"
	# dpkg unpacks without a sync per file (its force-unsafe-io): a root
	# holds nothing but what the archive has (one a crash left broken is
	# deleted and made again), and its installs run beside the tests
	# (test/matrix prepares the roots during the 15 leg), whose servers
	# would wait on those syncs
	echo force-unsafe-io >"$dir/etc/dpkg/dpkg.cfg.d/91shardid-unsafe-io"
	# PostgreSQL 19's packages (and only those) may come from unstable or
	# experimental: the same priority (500) as forky's for them, so apt
	# takes the highest version, the released 19 as soon as
	# a suite carries it; every other package of unstable is pinned below
	# forky's (experimental is NotAutomatic already). No pgTAP or PL/Proxy
	# is packaged for 19 yet: lib/deps.sh builds them from the suite's
	# source packages, so the root gets a deb-src line.
	if [ "$major" = 19 ]; then
		mirror=$(host_debian_mirror) || return 1
		printf 'deb %s experimental main\ndeb %s unstable main\ndeb-src %s %s main\n' \
			"$mirror" "$mirror" "$mirror" "$suite" >"$dir/etc/apt/sources.list.d/shardid-19.list"
		local pg19='postgresql-19 postgresql-client-19 postgresql-server-dev-19 libpq5 libpq-dev'
		printf 'Package: %s\nPin: release a=experimental\nPin-Priority: 500\n\nPackage: %s\nPin: release a=unstable\nPin-Priority: 500\n\nPackage: *\nPin: release a=unstable\nPin-Priority: 100\n' \
			"$pg19" "$pg19" >"$dir/etc/apt/preferences.d/postgresql-19"
	fi
	cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
	# the certificate authorities this machine adds (a TLS proxy in front of
	# a package registry such as npm's): trusted inside the root too
	if [ -n "$(ls /usr/local/share/ca-certificates/*.crt 2>/dev/null)" ]; then
		mkdir -p "$dir/usr/local/share/ca-certificates"
		cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
		[ ! -x "$dir/usr/sbin/update-ca-certificates" ] || chroot "$dir" update-ca-certificates >/dev/null 2>&1 || true
	fi
}

root_enter() {
	local dir
	dir=$(root_dir "$1") || return 1
	SHARDID_ENTERED+=("$dir")
	trap root_leave_all EXIT
	mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc" || return 1
	if ! mountpoint -q "$dir/dev"; then
		mount --rbind /dev "$dir/dev" && mount --make-rslave "$dir/dev" || return 1
	fi
}

root_run() {
	local dir
	dir=$(root_dir "$1") || return 1
	shift
	chroot "$dir" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

root_copy_checkout() {
	local dir to=${2:-/build/shardid}
	dir=$(root_dir "$1") || return 1
	rm -rf "${dir:?}$to"
	mkdir -p "$dir$to"
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$dir$to"
}

root_leave_all() {
	local dir
	for dir in "${SHARDID_ENTERED[@]}"; do
		# lazily if a process of the root still holds /dev/shm: it is
		# detached now and freed when that process ends
		mountpoint -q "$dir/dev" && { umount -R "$dir/dev" 2>/dev/null || umount -R -l "$dir/dev"; }
		mountpoint -q "$dir/proc" && { umount "$dir/proc" 2>/dev/null || umount -l "$dir/proc"; }
	done
	SHARDID_ENTERED=()
}
