# shellcheck shell=sh
# A stand-in for initramfs-tools' /usr/share/initramfs-tools/hook-functions where that package is
# not installed (CI, this repository's VM tests): copy_file and copy_exec with the same arguments,
# return codes and usr-merged targets (/lib, /bin, /sbin -> /usr/...), symlinks resolved.
# Tests run the real hook-functions instead when it exists.
verbose=${verbose:-n}

copy_file() { # copy_file TYPE SRC [TARGET]: 0 copied, 1 already there, 2 no SRC
	_src=$2
	_target=${3:-$2}
	[ -f "$_src" ] || return 2
	if [ -d "$DESTDIR/$_target" ] || [ "${_target%/}" != "$_target" ]; then
		_target=${_target%/}/${_src##*/}
	fi
	case "$_target" in
	/bin/* | /lib* | /sbin/*) _target=/usr$_target ;;
	esac
	[ -e "$DESTDIR$_target" ] && return 1
	mkdir -p "$DESTDIR${_target%/*}"
	cp -L "$_src" "$DESTDIR$_target" || return 2
}

copy_exec() { # copy_exec SRC [TARGET]: the file and every library ldd names for it
	copy_file binary "$1" "${2:-$1}" || return $(($? - 1))
	for _lib in $(env --unset=LD_PRELOAD ldd "$1" 2>/dev/null | sed -e '/\//!d' \
		-e 's/.*=>[[:blank:]]*\([^[:blank:]]*\).*/\1/' -e 's/^[[:blank:]]*\([^[:blank:]]*\) (.*)/\1/'); do
		copy_file binary "$_lib"
		[ $? -le 1 ] || return 1
	done
}
