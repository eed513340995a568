package filerest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/blobshare/blobshare/fs"
	"github.com/blobshare/blobshare/secdesc"
	"github.com/blobshare/blobshare/storagehttp"
)

// permissionJSON is the body of Create Permission and Get Permission.
type permissionJSON struct {
	Permission string `json:"permission"`
	Format     string `json:"format,omitempty"`
}

// maxPermission is the longest permission Create Permission takes (8 KiB
// of SDDL, as Azure documents; its base64 binary form may be longer).
const maxPermission = 8 << 10

func errInvalidPermission(reason string) error {
	return storagehttp.NewError(http.StatusBadRequest, "FileInvalidPermission",
		"The specified file permission is not valid.", Detail{Name: "Reason", Value: reason})
}

// permissionFormat reads a format name ("" → SDDL); anything else than
// sddl or binary is 400 InvalidHeaderValue.
func permissionFormat(h http.Header) (string, error) {
	f := h.Get("x-ms-file-permission-format")
	switch {
	case f == "", strings.EqualFold(f, "sddl"):
		return "sddl", nil
	case strings.EqualFold(f, "binary"):
		return "binary", nil
	}
	return "", storagehttp.InvalidHeader("x-ms-file-permission-format", f)
}

func (s *Server) createPermission(w http.ResponseWriter, c *call) error {
	body, err := io.ReadAll(io.LimitReader(c.r.Body, maxSmallBody+1))
	if err != nil {
		return err
	}
	if len(body) > maxSmallBody {
		return storagehttp.NewError(http.StatusRequestEntityTooLarge, CodeRequestBodyTooLarge, "The request body is too large.")
	}
	var p permissionJSON
	if err := json.Unmarshal(body, &p); err != nil {
		return storagehttp.NewError(http.StatusBadRequest, CodeInvalidInput, "One of the request inputs is not valid.",
			Detail{Name: "Reason", Value: "the body is not a permission in JSON: " + err.Error()})
	}
	format := "sddl"
	switch {
	case p.Format == "", strings.EqualFold(p.Format, "sddl"):
	case strings.EqualFold(p.Format, "binary"):
		format = "binary"
	default:
		return errInvalidPermission("unknown format " + p.Format)
	}
	if p.Permission == "" {
		return errInvalidPermission("empty permission")
	}
	if format == "sddl" && len(p.Permission) > maxPermission {
		return errInvalidPermission("longer than 8 KiB")
	}
	sddl, err := secdesc.Canonical(p.Permission, format)
	if err != nil {
		return errInvalidPermission(err.Error())
	}
	key, err := s.fs.CreatePermission(c.r.Context(), c.path.Share, sddl)
	if err != nil {
		return err
	}
	w.Header().Set("x-ms-file-permission-key", key)
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Server) getPermission(w http.ResponseWriter, c *call) error {
	key := c.r.Header.Get("x-ms-file-permission-key")
	if key == "" {
		return storagehttp.MissingHeader("x-ms-file-permission-key")
	}
	format, err := permissionFormat(c.r.Header)
	if err != nil {
		return err
	}
	sddl, err := s.fs.Permission(c.r.Context(), c.path.Share, key)
	if err != nil {
		return err
	}
	out, err := secdesc.Format(sddl, format)
	if err != nil {
		return err
	}
	b, err := json.Marshal(permissionJSON{Permission: out, Format: map[string]string{"sddl": "Sddl", "binary": "Binary"}[format]})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(b)
	return err
}

// permissionKey reads x-ms-file-permission (in x-ms-file-permission-format)
// or x-ms-file-permission-key of a request that sets an entry's
// permission: a permission is stored in the share (Create Permission; by
// Set File/Directory Properties under a key of its own,
// fs.CreateUpdatePermission) and its key returned; a key must exist in the
// share. "inherit" (new
// entries) is the default permission; "preserve" and no header change
// nothing (nil).
func (s *Server) permissionKey(c *call) (*string, error) {
	h := c.r.Header
	perm, key := h.Get("x-ms-file-permission"), h.Get("x-ms-file-permission-key")
	switch {
	case perm != "" && key != "":
		if strings.EqualFold(perm, "preserve") || strings.EqualFold(perm, "inherit") {
			break
		}
		return nil, storagehttp.NewError(http.StatusBadRequest, CodeInvalidHeaderValue,
			"Only one of x-ms-file-permission and x-ms-file-permission-key may be given.",
			Detail{Name: "HeaderName", Value: "x-ms-file-permission-key"})
	case strings.EqualFold(perm, "preserve"):
		return nil, nil
	case strings.EqualFold(perm, "inherit"):
		if key != "" {
			break
		}
		k := fs.DefaultPermissionKey
		return &k, nil
	case perm != "":
		format, err := permissionFormat(h)
		if err != nil {
			return nil, err
		}
		sddl, err := secdesc.Canonical(perm, format)
		if err != nil {
			return nil, errInvalidPermission(err.Error())
		}
		create := s.fs.CreatePermission
		if c.route.name == "SetFileProperties" || c.route.name == "SetDirectoryProperties" {
			create = s.fs.CreateUpdatePermission // a new key, as Azure answers
		}
		k, err := create(c.r.Context(), c.path.Share, sddl)
		return &k, err
	}
	if key == "" {
		return nil, nil
	}
	if _, err := s.fs.Permission(c.r.Context(), c.path.Share, key); err != nil {
		if errors.Is(err, fs.ErrPermissionKeyNotFound) {
			return nil, storagehttp.NewError(http.StatusBadRequest, "FileInvalidPermissionKey",
				"The specified file permission key does not exist in the share.",
				Detail{Name: "HeaderName", Value: "x-ms-file-permission-key"})
		}
		return nil, err
	}
	return &key, nil
}

// propertySemantics applies x-ms-file-property-semantics of Create File and
// Create Directory to the attributes asked: "New" adds Archive; "Restore"
// keeps them as given — none given is None, not a new file's Archive —
// when a permission is given too (else it is New, as documented); absent
// changes nothing. Other values: 400.
func propertySemantics(h http.Header, props *fs.SMBProperties) error {
	v := h.Get("x-ms-file-property-semantics")
	switch {
	case v == "":
		return nil
	case strings.EqualFold(v, "restore") && (h.Get("x-ms-file-permission") != "" || h.Get("x-ms-file-permission-key") != ""):
		if props.Attributes == nil {
			var none fs.Attributes
			props.Attributes = &none
		}
		return nil
	case strings.EqualFold(v, "new"), strings.EqualFold(v, "restore"):
		if props.Attributes != nil {
			a := *props.Attributes | fs.AttrArchive
			props.Attributes = &a
		}
		return nil
	}
	return storagehttp.InvalidHeader("x-ms-file-property-semantics", v)
}
