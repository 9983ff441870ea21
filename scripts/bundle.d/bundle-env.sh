# Shared by a bundle's `run`, `check` and browser wrapper (sourced, not run): finds what the
# target system already has, links only the bundled libraries it lacks, and picks the Vulkan
# driver. The caller sets `bundle_root` and has `set -euo pipefail`.
#
# Why only the missing ones: on a GPU server (Ubuntu 24.04, NVIDIA driver 580) Debian 12's
# older libstdc++.so.6 first on LD_LIBRARY_PATH shadowed the one the NVIDIA driver needs and
# vkCreateInstance failed with VK_ERROR_INCOMPATIBLE_DRIVER; leaving out every bundled library
# that `ldconfig -p` lists there fixed it.

# Vulkan ICD manifests: the loader's default search directories, and NVIDIA's container
# layout, which the loader does not search by itself.
BUNDLE_ICD_DIRS=(/etc/xdg/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d /usr/share/vulkan/icd.d)
BUNDLE_NVIDIA_ONLY_DIR=/usr/local/nvidia/share/vulkan/icd.d

bundle_say() { printf 'ocr-bench bundle: %s\n' "$*" >&2; }

bundle_load_meta() {
	# shellcheck source=/dev/null
	source "$bundle_root/meta/bundle.env"
}

bundle_ldconfig() {
	local candidate
	for candidate in /sbin/ldconfig /usr/sbin/ldconfig; do
		[[ -x $candidate ]] && { echo "$candidate"; return 0; }
	done
	command -v ldconfig || true
}

# "soname<TAB>path" for every 64-bit library the system has: ldconfig's cache, then the
# directories of the caller's own LD_LIBRARY_PATH (NVIDIA containers put the driver there).
bundle_system_libs() {
	local ldconfig dir file
	ldconfig=$(bundle_ldconfig)
	if [[ -n $ldconfig ]]; then
		"$ldconfig" -p | awk '/x86-64/ && / => / { print $1 "\t" $NF }'
	fi
	local IFS=:
	for dir in ${OCR_BENCH_BUNDLE_USER_LD_LIBRARY_PATH:-}; do
		[[ -d $dir ]] || continue
		for file in "$dir"/*.so*; do
			[[ -e $file ]] && printf '%s\t%s\n' "${file##*/}" "$file"
		done
	done
	return 0
}

# Fills BUNDLE_SYSTEM (soname -> path) once.
declare -gA BUNDLE_SYSTEM=()
bundle_read_system() {
	((${#BUNDLE_SYSTEM[@]})) && return 0
	local name path
	while IFS=$'\t' read -r name path; do
		[[ -n $name && -z ${BUNDLE_SYSTEM[$name]:-} ]] && BUNDLE_SYSTEM[$name]=$path
	done < <(bundle_system_libs)
	BUNDLE_SYSTEM[.]=.   # marks "read", even on a system whose cache could not be listed
}

# Sets BUNDLE_LIBDIR: a directory of links to the bundled libraries this system lacks, made
# once per bundle location and system library set (in the bundle's .cache, or under TMPDIR
# when the bundle is read-only). OCR_BENCH_BUNDLE_LIBS=all links every bundled library (for a
# system whose own copy is too old), none links nothing.
bundle_prepare_libs() {
	local mode=${OCR_BENCH_BUNDLE_LIBS:-missing}
	case $mode in
	missing | all | none) ;;
	*)
		bundle_say "OCR_BENCH_BUNDLE_LIBS=$mode is not allowed; use missing (the default), all or none"
		return 2
		;;
	esac
	bundle_read_system
	local key base dir tmp file name
	key=$({
		printf '%s\n%s\n%s\n' "$bundle_root" "$BUNDLE_ID" "$mode"
		printf '%s\n' "${!BUNDLE_SYSTEM[@]}" | LC_ALL=C sort
	} | sha256sum | cut -c1-16)
	if [[ -w $bundle_root ]]; then
		base=$bundle_root/.cache
	else
		base=${TMPDIR:-/tmp}/ocr-bench-bundle-$(id -u)
	fi
	dir=$base/libs-$key
	if [[ ! -f $dir/.complete ]]; then
		mkdir -p "$base"
		tmp=$(mktemp -d "$base/.libs-XXXXXX")
		for file in "$bundle_root"/lib/*.so*; do
			name=${file##*/}
			if [[ $mode == all || ($mode == missing && -z ${BUNDLE_SYSTEM[$name]:-}) ]]; then
				ln -s "$file" "$tmp/$name"
			fi
		done
		touch "$tmp/.complete"
		# Another run may have made it meanwhile: theirs is as good as ours.
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
	fi
	BUNDLE_LIBDIR=$dir
}

# Where a library named NAME comes from for the browser: "system PATH", "bundled" or "".
bundle_lib_source() {
	local name=$1
	# The link directory comes before the system's cache on LD_LIBRARY_PATH.
	if [[ -e $BUNDLE_LIBDIR/$name ]]; then
		echo "bundled lib/$name"
	elif [[ -n ${BUNDLE_SYSTEM[$name]:-} ]]; then
		echo "system ${BUNDLE_SYSTEM[$name]}"
	fi
}

bundle_icd_library() {
	sed -n 's/.*"library_path"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n1
}

bundle_is_nvidia_icd() {
	[[ ${1##*/} == *nvidia* ]] || bundle_icd_library "$1" | grep -qi nvidia
}

# Picks the Vulkan driver and checks that it can load. With $1 = 1 the bundled lavapipe
# (software) is used. Fills BUNDLE_NOTES and BUNDLE_PROBLEMS; exports VK_DRIVER_FILES and
# VK_ICD_FILENAMES only when it chose them itself (the user's own are passed through untouched).
bundle_prepare_vulkan() {
	local software=$1 icd dir library where targets=() found=() nvidia=()
	BUNDLE_NOTES=() BUNDLE_PROBLEMS=()
	where=$(bundle_lib_source libvulkan.so.1)
	if [[ -e $bundle_root/${BUNDLE_BROWSER_EXE%/*}/libvulkan.so.1 ]]; then
		# Chromium loads the loader it ships beside its binary, not the system's.
		BUNDLE_NOTES+=("Vulkan loader libvulkan.so.1: the browser's own, ${BUNDLE_BROWSER_EXE%/*}/libvulkan.so.1")
	elif [[ -n $where ]]; then
		BUNDLE_NOTES+=("Vulkan loader libvulkan.so.1: $where")
	else
		BUNDLE_PROBLEMS+=("no Vulkan loader: libvulkan.so.1 is neither on this system nor in the bundle, so WebGPU has no adapter (install libvulkan1)")
	fi
	if ((software)); then
		icd=$bundle_root/vulkan/icd.d/lvp_icd.x86_64.json
		if [[ ! -f $icd ]]; then
			BUNDLE_PROBLEMS+=("--software asks for the bundled lavapipe, but this bundle was built without it (--no-lavapipe)")
		else
			export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
			BUNDLE_NOTES+=("Vulkan driver: the bundled lavapipe, a SOFTWARE rasterizer on the CPU (asked for with --software)")
			targets=("$icd")
		fi
	elif [[ -n ${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-} ]]; then
		local list=${VK_DRIVER_FILES:-$VK_ICD_FILENAMES} IFS=:
		BUNDLE_NOTES+=("Vulkan driver: yours, passed through untouched (VK_DRIVER_FILES=${VK_DRIVER_FILES:-} VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-})")
		for icd in $list; do
			if [[ -e $icd ]]; then targets+=("$icd"); else BUNDLE_PROBLEMS+=("the ICD manifest $icd that you named does not exist"); fi
		done
		unset IFS
	else
		for dir in "${BUNDLE_ICD_DIRS[@]}" "$BUNDLE_NVIDIA_ONLY_DIR"; do
			for icd in "$dir"/*.json; do
				[[ -f $icd ]] || continue
				found+=("$icd")
				bundle_is_nvidia_icd "$icd" && nvidia+=("$icd")
			done
		done
		if ((${#nvidia[@]})); then
			icd=${nvidia[0]}
			if [[ ${icd%/*} == "$BUNDLE_NVIDIA_ONLY_DIR" ]]; then
				# The loader does not search this directory: name the manifest for it.
				export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
				BUNDLE_NOTES+=("Vulkan driver: NVIDIA ICD $icd (set as VK_DRIVER_FILES: the loader does not search ${BUNDLE_NVIDIA_ONLY_DIR})")
			else
				BUNDLE_NOTES+=("Vulkan driver: NVIDIA ICD $icd (found by the loader itself; all manifests: ${found[*]})")
			fi
			targets=("$icd")
		elif ((${#found[@]})); then
			BUNDLE_NOTES+=("Vulkan driver: the loader chooses among ${found[*]} (no NVIDIA ICD among them)")
			targets=("${found[@]}")
		else
			BUNDLE_PROBLEMS+=("no Vulkan ICD manifest (*.json) in ${BUNDLE_ICD_DIRS[*]} $BUNDLE_NVIDIA_ONLY_DIR, so WebGPU has no adapter: install the GPU driver's Vulkan part, set VK_DRIVER_FILES to its manifest, or add --software for the bundled lavapipe (a software adapter)")
		fi
	fi
	for icd in "${targets[@]}"; do
		library=$(bundle_icd_library "$icd")
		if [[ -z $library ]]; then
			BUNDLE_PROBLEMS+=("the ICD manifest $icd names no library_path")
			continue
		fi
		case $library in
		/*) [[ -e $library ]] || BUNDLE_PROBLEMS+=("the ICD manifest $icd names $library, which does not exist") ;;
		*/*) [[ -e ${icd%/*}/$library ]] || BUNDLE_PROBLEMS+=("the ICD manifest $icd names $library, which does not exist beside it") ;;
		*) [[ -n $(bundle_lib_source "$library") ]] || BUNDLE_PROBLEMS+=("the ICD manifest $icd names $library, which is not on this system's library path (ldconfig -p, LD_LIBRARY_PATH)") ;;
		esac
		if [[ $library == *nvidia* ]]; then
			# Measured: libGLX_nvidia.so.0 created no Vulkan instance until glvnd was present.
			where=$(bundle_lib_source libGLdispatch.so.0)
			if [[ -n $where ]]; then
				BUNDLE_NOTES+=("glvnd libGLdispatch.so.0 (needed by the NVIDIA ICD): $where")
			else
				BUNDLE_PROBLEMS+=("no glvnd libGLdispatch.so.0 (neither on this system nor in the bundle): the NVIDIA ICD $library creates no Vulkan instance without it (install libglvnd0)")
			fi
		fi
	done
	return 0
}

# "ok" or why this system's glibc cannot run the bundle.
bundle_glibc_verdict() {
	local have
	have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }' || true)
	if [[ -z $have ]]; then
		echo "unknown glibc (getconf GNU_LIBC_VERSION gave nothing); the bundle needs $BUNDLE_GLIBC_NEEDED or newer"
	elif [[ $(printf '%s\n%s\n' "$BUNDLE_GLIBC_NEEDED" "$have" | sort -V | head -n1) == "$BUNDLE_GLIBC_NEEDED" ]]; then
		echo "ok"
	else
		echo "this system has glibc $have, the bundle needs $BUNDLE_GLIBC_NEEDED or newer (it was built on $BUNDLE_BUILT_ON)"
	fi
}

# glibc's own libraries: never bundled, always the target's (they must match its ld.so).
bundle_is_glibc() {
	[[ $1 =~ ^(ld-linux|linux-vdso|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libthread_db|libc_malloc_debug|libmemusage|libpcprofile|libnss_[a-z0-9_]+)([.-]|$) ]]
}

# The ./check report. $1 = 1 also checks the bundle against a system that has nothing but
# glibc; $2 is the --gpu-route asked for. Returns 1 when anything is missing.
bundle_report() {
	local bare=$1 gpu_route=$2 problems=0 file name icd library where used=() own=() missing=() os
	os=$( (source /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || true)
	echo "bundle:  $bundle_root"
	echo "         $BUNDLE_BROWSER_VERSION, built $BUNDLE_BUILT on $BUNDLE_BUILT_ON; needs glibc $BUNDLE_GLIBC_NEEDED or newer"
	echo "system:  ${os:-unknown OS}, $(getconf GNU_LIBC_VERSION 2>/dev/null || echo 'glibc unknown'), kernel $(uname -r)"
	echo
	echo "Vulkan:"
	for file in "${BUNDLE_NOTES[@]}"; do echo "  $file"; done
	echo "  ICD manifests on this system:"
	for icd in "${BUNDLE_ICD_DIRS[@]/%//*.json}" "$BUNDLE_NVIDIA_ONLY_DIR"/*.json; do
		for file in $icd; do
			[[ -f $file ]] || continue
			library=$(bundle_icd_library "$file")
			case $library in
			/*) [[ -e $library ]] && where=present || where=MISSING ;;
			*) where=$(bundle_lib_source "$library"); where=${where:-MISSING} ;;
			esac
			echo "    $file -> $library ($where)"
		done
	done
	[[ -f $bundle_root/vulkan/icd.d/lvp_icd.x86_64.json ]] && echo "  bundled: lavapipe (software; use --software), vulkan/icd.d/lvp_icd.x86_64.json"
	echo
	# The runner decides the route; this asks it, with the environment the run would have.
	"$bundle_root/bin/ocr-bench" gpu-route --browser "$BUNDLE_BROWSER" --gpu-route "$gpu_route" ||
		BUNDLE_PROBLEMS+=("bin/ocr-bench gpu-route failed, so the GPU route is not known")
	echo
	for file in "$bundle_root"/lib/*.so*; do
		name=${file##*/}
		if [[ -e $BUNDLE_LIBDIR/$name ]]; then used+=("$name"); else own+=("$name -> ${BUNDLE_SYSTEM[$name]:-none (OCR_BENCH_BUNDLE_LIBS=none)}"); fi
	done
	echo "Libraries: $((${#used[@]} + ${#own[@]})) bundled; mode ${OCR_BENCH_BUNDLE_LIBS:-missing}; links in $BUNDLE_LIBDIR"
	if [[ ${OCR_BENCH_BUNDLE_LIBS:-missing} == missing ]]; then
		echo "  from the bundle (${#used[@]}, this system lacks them):"
	else
		echo "  from the bundle (${#used[@]}, as OCR_BENCH_BUNDLE_LIBS says):"
	fi
	for name in "${used[@]}"; do echo "    $name"; done
	echo "  the system's own instead (${#own[@]}):"
	for name in "${own[@]}"; do echo "    $name"; done
	[[ -f /etc/fonts/fonts.conf ]] || echo "  note: no /etc/fonts/fonts.conf (fontconfig warns; the benchmark renders no text)"
	echo
	# Every library an executable or library of the bundle links must come from somewhere.
	declare -A inside=()
	for file in "$bundle_root"/lib/*.so* "$bundle_root/${BUNDLE_BROWSER_EXE%/*}"/*.so*; do inside[${file##*/}]=1; done
	while IFS=$'\t' read -r file name; do
		bundle_is_glibc "$name" && continue
		[[ -n ${inside[$name]:-} && ( -e $BUNDLE_LIBDIR/$name || -e $bundle_root/${BUNDLE_BROWSER_EXE%/*}/$name ) ]] && continue
		[[ -n ${BUNDLE_SYSTEM[$name]:-} ]] && continue
		missing+=("$name (linked by $file)")
	done <"$bundle_root/meta/needed.txt"
	if ((bare)); then
		while IFS=$'\t' read -r file name; do
			bundle_is_glibc "$name" || [[ -n ${inside[$name]:-} ]] || missing+=("$name (linked by $file; on a system with glibc only)")
		done <"$bundle_root/meta/needed.txt"
	fi
	if ((${#missing[@]})); then
		echo "MISSING libraries (${#missing[@]}):"
		printf '  %s\n' "${missing[@]}" | sort -u
		problems=1
	else
		echo "Linked libraries: every one found ($(wc -l <"$bundle_root/meta/needed.txt") links checked$( ((bare)) && echo ', also against a glibc-only system'))"
	fi
	if ((${#BUNDLE_PROBLEMS[@]})); then
		echo
		echo "PROBLEMS:"
		printf '  %s\n' "${BUNDLE_PROBLEMS[@]}"
		problems=1
	fi
	return "$problems"
}
