#!/bin/sh
# embed.sh INPUT OUTPUT: the page as a C array, for web.h.
set -eu
out=$(realpath -m "$2")
{
	echo '#include "verifierd/web.h"'
	cd "$(dirname "$1")"
	xxd -i -n verifierd_web_page "$(basename "$1")" | sed 's/^unsigned/const unsigned/'
} > "$out"
