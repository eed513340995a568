package locks

import "testing"

// TestStatOpenBreaks: an SMB open whose access mask holds only
// FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES and SYNCHRONIZE is a stat
// open and breaks neither a batch oplock nor an RWH lease; READ_CONTROL
// is a stat open towards the lease but not towards the oplock; any other
// right (FILE_READ_EA here) breaks Write caching of both (MS-FSA
// 2.1.4.12; smbtorture smb2.oplock.statopen1, smb2.lease.statopen4).
func TestStatOpenBreaks(t *testing.T) {
	lease := &LeaseInfoSMB{LeaseIdentity: LeaseIdentity{Key: LeaseKey{1}}, State: CacheRWH, Version: 2}
	holders := []CacheHolder{
		{Oplock: OplockBatch, Handles: []Handle{{ID: 1, Access: AccessRead | AccessWrite, Share: ShareAll}}},
		{Lease: lease, Handles: []Handle{{ID: 2, Access: AccessRead | AccessWrite, Share: ShareAll}}},
	}
	for _, tc := range []struct {
		name        string
		mask        Mask
		oplockBreak bool
		leaseBreak  bool
	}{
		{"read attributes", MaskReadAttributes, false, false},
		{"write attributes", MaskWriteAttributes, false, false},
		{"synchronize", MaskSynchronize, false, false},
		{"read control", MaskReadControl, true, false},
		{"read EA", MaskReadEA, true, true},
		{"read data", MaskReadData, true, true},
	} {
		d := DecideCaching(holders, CacheRequest{Who: RequesterSMB, Kind: CacheOpOpen, Access: tc.mask.Access(), Share: ShareAll, Mask: tc.mask})
		var gotOplock, gotLease bool
		for _, b := range d.Breaks {
			if b.Holder == 0 {
				gotOplock = true
			} else {
				gotLease = true
			}
		}
		if gotOplock != tc.oplockBreak || gotLease != tc.leaseBreak {
			t.Errorf("%s: breaks the oplock %v, the lease %v; want %v, %v (%+v)", tc.name, gotOplock, gotLease, tc.oplockBreak, tc.leaseBreak, d.Breaks)
		}
	}
}
