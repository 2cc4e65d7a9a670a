#!/bin/sh
# Generate the seed machines' trees (on tmpfs when there is one) and run a
# test binary on them: sysroot-tests.sh GEN-SYSROOT TEST-BINARY
set -eu
gen=$1
bin=$2
tmp=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for spec in hygon-7447v-2s-nps3 hygon-7447v-2s-nps6 turin-9845-2s-nps10 \
	    siena-8534-nps2-llc gnr-2s-snc3 vm-2cpu; do
	python3 "$gen" -q "$spec" "$tmp/$spec"
done
python3 "$gen" -q --set topology.cores_per_package=4 --offline 3 vm-2cpu "$tmp/vm-offline"
python3 "$gen" -q --set topology.packages=2 --set 'topology.package_ids=36 8442' \
	--set 'numa.distance=local=10 package=12 remote=20' vm-2cpu "$tmp/sparse-packages"
python3 "$gen" -q --set topology.cores_per_package=8 --set topology.threads_per_core=2 \
	--set topology.packages=1 --set topology.nodes_per_package=2 --set 'numa.distance=local=10 package=12 remote=20' \
	vm-2cpu "$tmp/damaged"
python3 "$gen" -q --set kernel.lockdown=confidentiality \
	--set 'kernel.cmdline=BOOT_IMAGE=/vmlinuz root=/dev/vda ro relax_domain_level=2' vm-2cpu "$tmp/vm-lockdown"
mkdir "$tmp/empty"
# Not exec: the EXIT trap must remove the trees.
"$bin" "$tmp"
