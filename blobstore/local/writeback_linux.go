package local

import (
	"os"
	"syscall"
)

// startWriteback asks the kernel to start writing f's dirty pages now
// without waiting (sync_file_range SYNC_FILE_RANGE_WRITE), so the fsync at
// commit finds little left to do and disk writes overlap with staging the
// next block. Only a hint: errors are ignored, durability comes from the
// fsync in CommitBlocks.
func startWriteback(f *os.File) {
	const syncFileRangeWrite = 0x2
	_ = syscall.SyncFileRange(int(f.Fd()), 0, 0, syncFileRangeWrite)
}
