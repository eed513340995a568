package smb

import "sync"

// clientConns lists the connections of each client (ClientGuid) in the
// order they negotiated, for lease break notifications: a lease is the
// client's (MS-SMB2 3.3.1.11: one lease table per ClientGuid), and its
// break goes to one of the client's connections (3.3.4.7), the oldest
// still open, as smbd sends it (smbtorture smb2.lease.v2_complex1 expects
// the break of a lease opened on a second connection on the first).
type clientConns struct {
	mu sync.Mutex
	m  map[[16]byte][]*conn
}

// add records c once it negotiated.
func (cc *clientConns) add(c *conn) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil {
		cc.m = map[[16]byte][]*conn{}
	}
	cc.m[c.clientGUID] = append(cc.m[c.clientGUID], c)
}

// remove forgets c when it closes.
func (cc *clientConns) remove(c *conn) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	list := cc.m[c.clientGUID]
	for i, x := range list {
		if x == c {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(cc.m, c.clientGUID)
	} else {
		cc.m[c.clientGUID] = list
	}
}

// first is the oldest open connection of client guid, nil when none.
func (cc *clientConns) first(guid [16]byte) *conn {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if list := cc.m[guid]; len(list) > 0 {
		return list[0]
	}
	return nil
}
