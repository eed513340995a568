#!/usr/bin/python3
"""smbctl: a line-driven SMB2 client over impacket, for blobshare's tests.

One command a line on stdin, one answer line on stdout ("ok [value]" or
"err STATUS_NAME"), flushed after each, so a Go test can drive a real SMB
client with full control of access masks, share access, create options and
byte-range locks:

  connect HOST PORT USER PASSWORD SHARE
  open ID PATH ACCESS SHARE DISPOSITION OPTIONS   (numbers in hex)
  close ID
  read ID OFFSET LENGTH                           -> ok HEXDATA
  write ID OFFSET HEXDATA
  lock ID OFFSET LENGTH FLAGS                      (SMB2_LOCK_FLAG_* in hex)
  dispose ID 0|1                                   (FileDispositionInformation)
  openx ID PATH ACCESS SHARE DISPOSITION OPTIONS [TAG:HEXDATA ...]
                                                   open PATH exactly as given (no client-side
                                                   normalisation of "." or ".."), with create
                                                   contexts (TAG is the 4-character name)
  reauth USER PASSWORD                             SESSION_SETUP again on the logged-on session
  fsctl ID CODE MAXOUT [HEXIN]                     (CODE in hex) -> ok HEXDATA
  queryfs ID CLASS                                 QUERY_INFO of the file system -> ok HEXDATA
"""
import ntpath
import struct
import sys

from impacket import nt_errors, smb3, smbconnection
from impacket.smb3structs import SMB2_LOCK_ELEMENT, SMB2_0_INFO_FILE, SMB2_0_INFO_FILESYSTEM
from impacket.smbconnection import SMBConnection

FILE_DISPOSITION_INFORMATION = 13


class _Latin1:
    """impacket 0.10's SMB3.lock joins str() of its elements (a Python 2
    leftover); this element's str() is its bytes as latin-1, which the
    packet encoder turns back into the same bytes."""

    def __init__(self, b):
        self.b = b

    def __str__(self):
        return self.b.decode("latin-1")


class _Raw:
    """Bytes impacket sends as they are (create contexts)."""

    def __init__(self, b):
        self.b = b

    def getData(self):
        return self.b


def create_contexts(specs):
    """Encodes TAG:HEXDATA specs as a chain of SMB2_CREATE_CONTEXTs
    (MS-SMB2 2.2.13.2): name at offset 16, data at 24, each entry padded
    to 8 bytes."""
    entries = []
    for spec in specs:
        tag, data = spec.split(":", 1)
        data = bytes.fromhex(data)
        e = struct.pack("<IHHHHI", 0, 16, len(tag), 0, 24 if data else 0, len(data))
        e += tag.encode() + b"\0" * 4 + data
        e += b"\0" * (-len(e) % 8)
        entries.append(e)
    out = b""
    for i, e in enumerate(entries):
        if i < len(entries) - 1:
            e = struct.pack("<I", len(e)) + e[4:]
        out += e
    return [_Raw(out)] if out else None


def open_exact(conn, tree, path, access, share, disp, opts, contexts):
    """impacket's create normalises the path with ntpath.normpath (so
    "d\\.." would become "."): for the duration of the call, send it as
    given, so the server is what judges it."""
    saved = ntpath.normpath
    ntpath.normpath = lambda p: p
    try:
        return conn.getSMBServer().create(tree, path, access, share, opts, disp, 0,
                                          createContexts=contexts)
    finally:
        ntpath.normpath = saved


def status_name(e):
    code = e.getErrorCode() if hasattr(e, "getErrorCode") else e.get_error_code()
    name = nt_errors.ERROR_MESSAGES.get(code, ("0x%08X" % code,))[0]
    return name


def main():
    conn = tree = None
    files = {}
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        try:
            cmd = f[0]
            out = "ok"
            if cmd == "connect":
                host, port, user, password, share = f[1:6]
                conn = SMBConnection(host, host, sess_port=int(port))
                conn.login(user, password, "")
                tree = conn.connectTree(share)
            elif cmd == "open":
                fid, path = f[1], f[2]
                access, share, disp, opts = (int(x, 16) for x in f[3:7])
                files[fid] = conn.getSMBServer().create(tree, path, access, share, opts, disp, 0)
            elif cmd == "openx":
                fid, path = f[1], f[2]
                access, share, disp, opts = (int(x, 16) for x in f[3:7])
                files[fid] = open_exact(conn, tree, path, access, share, disp, opts,
                                        create_contexts(f[7:]))
            elif cmd == "reauth":
                conn.getSMBServer().login(f[1], f[2], "")
            elif cmd == "fsctl":
                blob = bytes.fromhex(f[4]) if len(f) > 4 else b""
                data = conn.getSMBServer().ioctl(tree, files[f[1]], int(f[2], 16),
                                                 flags=1, inputBlob=blob,
                                                 maxOutputResponse=int(f[3]))
                out = "ok " + data.hex()
            elif cmd == "queryfs":
                data = conn.getSMBServer().queryInfo(tree, files[f[1]], b"", SMB2_0_INFO_FILESYSTEM,
                                                     int(f[2]))
                out = "ok " + data.hex()
            elif cmd == "close":
                try:
                    conn.closeFile(tree, files.pop(f[1]))
                except KeyError:
                    # impacket 0.10 keys its table of open files by name:
                    # closing the second of two handles on one path
                    # raises after the server answered the CLOSE with
                    # success (smb3.close deletes the name twice).
                    pass
            elif cmd == "read":
                data = conn.getSMBServer().read(tree, files[f[1]], int(f[2]), int(f[3]))
                out = "ok " + data.hex()
            elif cmd == "write":
                data = bytes.fromhex(f[3])
                conn.getSMBServer().write(tree, files[f[1]], data, int(f[2]), len(data))
            elif cmd == "lock":
                el = SMB2_LOCK_ELEMENT()
                el["Offset"], el["Length"], el["Flags"] = int(f[2]), int(f[3]), int(f[4], 16)
                conn.getSMBServer().lock(tree, files[f[1]], [_Latin1(el.getData())])
            elif cmd == "dispose":
                conn.getSMBServer().setInfo(tree, files[f[1]], bytes([int(f[2])]),
                                            SMB2_0_INFO_FILE, FILE_DISPOSITION_INFORMATION)
            else:
                out = "err unknown command"
        except Exception as e:
            if isinstance(e, (smbconnection.SessionError, smb3.SessionError)):
                print("err " + status_name(e), flush=True)
                continue
            # A client-side failure: report it, keep going.
            out = "err %s: %s" % (type(e).__name__, str(e).replace("\n", " "))
        print(out, flush=True)


if __name__ == "__main__":
    main()
