package filerest

import (
	"net/http"
	"strconv"

	"github.com/blobshare/blobshare/fs"

	"github.com/blobshare/blobshare/storagehttp"
)

func (s *Server) createDirectory(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	props, err := parseSMBProps(c.r.Header, storagehttp.InfoFrom(c.r.Context()).Start, false)
	if err != nil {
		return err
	}
	if props.PermissionKey, err = s.permissionKey(c); err != nil {
		return err
	}
	if err := propertySemantics(c.r.Header, &props); err != nil {
		return err
	}
	a, err := s.fs.CreateDirectory(c.r.Context(), fs.CreateDirectoryRequest{Path: c.fsPath(), Props: props, Metadata: md})
	if err != nil {
		return err
	}
	setSMB(w.Header(), a)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// statDir stats a directory (or share root); a file there is ErrNotDir.
func (s *Server) statDir(c *call) (fs.Attr, error) {
	var a fs.Attr
	var err error
	if snap := c.q.Get("sharesnapshot"); snap != "" {
		a, err = s.fs.SnapshotStat(c.r.Context(), snap, c.fsPath())
	} else {
		a, _, err = s.fs.Stat(c.r.Context(), c.fsPath(), "")
	}
	if err != nil {
		return a, err
	}
	if a.Kind == fs.KindFile {
		return a, &fs.Error{Op: "stat", Path: c.fsPath(), Err: fs.ErrNotDir}
	}
	return a, nil
}

func (s *Server) getDirectoryProperties(w http.ResponseWriter, c *call) error {
	a, err := s.statDir(c)
	if err != nil {
		return err
	}
	h := w.Header()
	setSMB(h, a)
	storagehttp.SetMetadataHeaders(h, a.Metadata)
	h.Set("x-ms-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) setDirectoryProperties(w http.ResponseWriter, c *call) error {
	props, err := parseSMBProps(c.r.Header, storagehttp.InfoFrom(c.r.Context()).Start, false)
	if err != nil {
		return err
	}
	if props.PermissionKey, err = s.permissionKey(c); err != nil {
		return err
	}
	if _, err := s.statDir(c); err != nil {
		return err
	}
	a, err := s.fs.SetProperties(c.r.Context(), fs.SetPropertiesRequest{Path: c.fsPath(), Props: props})
	if err != nil {
		return err
	}
	setSMB(w.Header(), a)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) setDirectoryMetadata(w http.ResponseWriter, c *call) error {
	md, err := storagehttp.ParseMetadata(c.r.Header)
	if err != nil {
		return err
	}
	if _, err := s.statDir(c); err != nil {
		return err
	}
	a, err := s.fs.SetMetadata(c.r.Context(), c.fsPath(), md, "")
	if err != nil {
		return err
	}
	setCommon(w.Header(), a)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteDirectory(w http.ResponseWriter, c *call) error {
	if err := s.breakDirCaches(c); err != nil { // dirlease.go
		return err
	}
	if err := s.fs.DeleteDirectory(c.r.Context(), c.fsPath()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) listDirectory(w http.ResponseWriter, c *call) error {
	req, err := listParams(c)
	if err != nil {
		return err
	}
	inc, err := includeSet(c, "Timestamps", "Etag", "Attributes", "PermissionKey")
	if err != nil {
		return err
	}
	if _, err := parseBoolHeader(c.r.Header, "x-ms-file-extended-info"); err != nil {
		return err
	}
	var res fs.ListResult
	if snap := c.q.Get("sharesnapshot"); snap != "" {
		res, err = s.fs.SnapshotList(c.r.Context(), snap, c.fsPath(), req)
	} else {
		res, err = s.fs.ListDirectory(c.r.Context(), c.fsPath(), req)
	}
	if err != nil {
		return err
	}
	out := listFilesXML{
		ServiceEndpoint: serviceEndpoint(c.r, s.account),
		ShareName:       c.path.Share,
		DirectoryPath:   c.path.Path(),
		Prefix:          nameText(req.Prefix),
		DirectoryID:     strconv.FormatUint(uint64(res.Dir.ID), 10),
		NextMarker:      res.NextMarker,
	}
	if _, ok := c.q["marker"]; ok {
		out.Marker = &req.Marker
	}
	if _, ok := c.q["maxresults"]; ok {
		out.MaxResults = &req.MaxResults
	}
	for _, a := range res.Entries {
		e := entryXML{FileID: strconv.FormatUint(uint64(a.ID), 10), Name: nameText(a.Name)}
		e.XMLName.Local = "Directory"
		if a.Kind == fs.KindFile {
			e.XMLName.Local = "File"
			size := a.Size
			e.Properties.ContentLength = &size
		}
		if inc["timestamps"] {
			e.Properties.CreationTime = storagehttp.FormatTime7(a.Created)
			e.Properties.LastAccessTime = storagehttp.FormatTime7(a.LastWrite)
			e.Properties.LastWriteTime = storagehttp.FormatTime7(a.LastWrite)
			e.Properties.ChangeTime = storagehttp.FormatTime7(a.Change)
			e.Properties.LastModified = a.Modified.UTC().Format(http.TimeFormat)
		}
		if inc["etag"] {
			e.Properties.Etag = a.ETag
		}
		if inc["attributes"] {
			e.Attributes = formatAttributes(a.Attributes)
		}
		if inc["permissionkey"] {
			e.PermissionKey = a.PermissionKey
			if e.PermissionKey == "" {
				e.PermissionKey = defaultPermissionKey
			}
		}
		out.Entries = append(out.Entries, e)
	}
	return storagehttp.WriteXML(w, http.StatusOK, out)
}
