// Package integration holds blobshare's end-to-end tests: real blobshare
// processes (serve, mount, session) built from ./cmd/blobshare, real FUSE
// mounts, the official Azure SDK for Go against the REST endpoint, and real
// command-line tools on the mount.
//
// The tests build the binary once (TestMain) and start every process
// themselves, stopping it in t.Cleanup. A test that needs FUSE fails instead
// of skipping when BLOBSHARE_REQUIRE_ALL=1, as CI sets it.
//
// TestLinuxCIFSClient tests the Linux kernel's SMB client, which the test
// machines' own kernels lack, in a QEMU guest (qemu_test.go): Debian's
// kernel and busybox, extracted by `make cifs-guest` into a cache
// directory, and an initramfs the test writes with the modules cifs needs
// and cifsguest, a static program that does the test's system calls on the
// mounts and answers each with "ok" or the errno, one line at a time over
// a serial port. The guest's only network is QEMU's user mode with
// restrict=on and one forwarded address, the SMB endpoint on the host's
// loopback. KVM is used when it boots the guest, TCG otherwise.
package integration
