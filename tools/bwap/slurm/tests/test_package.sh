#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# slurm-bwap's files as dpkg handles them, in a /tmp root, as TAP:
#  - installed: Slurm's plugstack.conf (include plugstack.conf.d/*) reaches
#    the bwap.so line, kept in the conffile /etc/slurm/bwap/plugstack.conf;
#  - removed (dpkg keeps every regular file under /etc, dh_installdeb's
#    conffiles, and removes the rest, bwap.so included, as apt does when a
#    Slurm upgrade removes slurm-bwap): no bwap.so line is left for slurmd
#    or srun to fail on, and the site's arguments are kept;
#  - installed again: the line is back with the site's arguments;
#  - slurmd is ordered after bwapd (slurmd.service.d);
#  - an upgrade from before 1.0.1 (the line was the conffile
#    plugstack.conf.d/bwap.conf): preinst and postinst carry a site's line
#    over to the new conffile, and drop an unchanged one.
# MAKE_INSTALL may name another install command (to run an older Makefile).
here=$(cd "$(dirname "$0")" && pwd)
deb=$here/../../../../packaging/bwap-tools/debian
tmp=$(mktemp -d /tmp/bwap-test-package.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# install ROOT: the package's files into ROOT, as debian/rules installs them (bwap.so: a stand-in)
install_into() {
	plugdir=/usr/lib/x86_64-linux-gnu/slurm-wlm
	# shellcheck disable=SC2086
	${MAKE_INSTALL:-make -s -C "$here/.." install-conf} DESTDIR="$1" PREFIX=/usr SYSCONFDIR=/etc \
		PLUGINDIR=$plugdir LIBEXECDIR=/usr/libexec SYSTEMDUNITDIR=/usr/lib/systemd/system >/dev/null 2>&1 ||
		return 1
	mkdir -p "$1$plugdir"
	[ -e "$1$plugdir/bwap.so" ] || echo 'ELF stand-in' > "$1$plugdir/bwap.so"
	# Debian's plugstack.conf (slurm-wlm's), relative so that it reads ROOT's directory
	echo 'include plugstack.conf.d/*' > "$1/etc/slurm/plugstack.conf"
}
# active ROOT: the bwap.so lines Slurm reads through ROOT's plugstack.conf, one per line
active() {
	for f in "$1"/etc/slurm/plugstack.conf.d/*; do
		[ -e "$f" ] && grep -hE '^[[:space:]]*(required|optional)[[:space:]]+[^[:space:]]*bwap\.so' "$f"
	done
}
# dpkg_remove ROOT MANIFEST: what dpkg -r leaves: conffiles (regular files under /etc) and
# what the package did not install; everything else of MANIFEST goes, links first
dpkg_remove() {
	while read -r f; do
		case "$f" in
		/etc/*) [ -L "$1$f" ] && rm -f "$1$f" ;;
		*) rm -f "$1$f" ;;
		esac
	done < "$2"
}

root=$tmp/root
install_into "$root"
ok $? "the package's files installed into TMP/root"
(cd "$root" && find . \( -type f -o -type l \) | sed 's|^\.||' | grep -v '^/etc/slurm/plugstack.conf$') > "$tmp/manifest"
line=$(active "$root")
echo "# active: $line"
case "$line" in required\ /usr/lib/*/slurm-wlm/bwap.so\ missing=fail*) r=0 ;; *) r=1 ;; esac
ok $r "installed: plugstack.conf reaches the required bwap.so line"
[ -f "$root/etc/slurm/bwap/plugstack.conf" ] && [ ! -L "$root/etc/slurm/bwap/plugstack.conf" ]
ok $? "the line is kept in the conffile /etc/slurm/bwap/plugstack.conf (a regular file under /etc)"
grep -qx 'After=bwapd.service' "$root/usr/lib/systemd/system/slurmd.service.d/bwap.conf" 2>/dev/null
ok $? "slurmd.service.d/bwap.conf orders slurmd after bwapd"

# the site's arguments, then dpkg -r
sed -i 's/ missing=fail$/ missing=run max_weight=31/' "$root/etc/slurm/bwap/plugstack.conf" 2>/dev/null ||
	sed -i 's/ missing=fail$/ missing=run max_weight=31/' "$root/etc/slurm/plugstack.conf.d/bwap.conf"
dpkg_remove "$root" "$tmp/manifest"
left=$(active "$root")
echo "# active after removal: ${left:-none}"
[ -z "$left" ] && ! ls "$root"/usr/lib/*/slurm-wlm/bwap.so >/dev/null 2>&1
ok $? "removed: bwap.so is gone and no bwap.so line is left for slurmd and srun (left: '${left:-none}')"
grep -q ' missing=run max_weight=31$' "$root/etc/slurm/bwap/plugstack.conf" 2>/dev/null
ok $? "removed: the site's arguments are kept in the conffile"

# installed again: dpkg keeps the changed conffile and puts the link back
install_into "$tmp/pkg"
(cd "$tmp/pkg" && find . \( -type f -o -type l \)) | sed 's|^\.||' | while read -r f; do
	case "$f" in /etc/*) [ -L "$tmp/pkg$f" ] || [ ! -e "$root$f" ] || continue ;; esac
	mkdir -p "$(dirname "$root$f")"
	cp -P "$tmp/pkg$f" "$root$f"
done
line=$(active "$root")
case "$line" in *" missing=run max_weight=31") r=0 ;; *) r=1 ;; esac
ok $r "installed again: the line is back, with the site's arguments ($line)"

# an upgrade from before 1.0.1 (maintainer scripts, with DPKG_ROOT and a fake dpkg-query)
if [ ! -x "$deb/slurm-bwap.preinst" ] || ! command -v dpkg >/dev/null; then
	for d in "a site's changed line is carried over" "an unchanged line is dropped"; do
		n=$((n + 1))
		echo "ok $n - # SKIP upgrade from before 1.0.1: $d (no packaging/ or dpkg here)"
	done
else
	mkdir -p "$tmp/bin"
	for changed in 1 0; do
		r2=$tmp/up$changed
		mkdir -p "$r2/etc/slurm/plugstack.conf.d"
		echo 'required /usr/lib/x86_64-linux-gnu/slurm-wlm/bwap.so missing=fail' > "$r2/etc/slurm/plugstack.conf.d/bwap.conf"
		sum=$(md5sum < "$r2/etc/slurm/plugstack.conf.d/bwap.conf" | cut -d' ' -f1)
		printf '#!/bin/sh\necho " /etc/slurm/plugstack.conf.d/bwap.conf %s"\n' "$sum" > "$tmp/bin/dpkg-query"
		chmod +x "$tmp/bin/dpkg-query"
		[ $changed -eq 0 ] || sed -i 's/missing=fail/missing=run deny=debug/' "$r2/etc/slurm/plugstack.conf.d/bwap.conf"
		PATH=$tmp/bin:$PATH DPKG_ROOT=$r2 sh "$deb/slurm-bwap.preinst" upgrade 1.0 > /dev/null
		install_into "$r2"	# dpkg unpacks the new files
		DPKG_ROOT=$r2 sh "$deb/slurm-bwap.postinst" configure 1.0 > /dev/null
		line=$(active "$r2")
		echo "# upgrade, site's line changed=$changed: active '$line'"
		if [ $changed -eq 1 ]; then
			[ "$(echo "$line" | wc -l)" -eq 1 ] && case "$line" in *"missing=run deny=debug") true ;; *) false ;; esac &&
				[ -L "$r2/etc/slurm/plugstack.conf.d/bwap.conf" ] && [ -f "$r2/etc/slurm/bwap/plugstack.conf.dpkg-dist" ]
			ok $? "upgrade from 1.0: a site's changed line is carried over to /etc/slurm/bwap/plugstack.conf, read once through the link"
		else
			[ "$(echo "$line" | wc -l)" -eq 1 ] && case "$line" in *"bwap.so missing=fail") true ;; *) false ;; esac &&
				[ ! -e "$r2/etc/slurm/bwap/plugstack.conf.dpkg-dist" ]
			ok $? "upgrade from 1.0: an unchanged line is dropped for the package's"
		fi
	done
fi
echo "1..$n"
[ "$failed" -eq 0 ]
