package storagehttp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// signedJWT is a JWT with claims, HMAC-SHA256-signed with a throwaway key
// (the check must not depend on the signature).
func signedJWT(t *testing.T, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := enc.EncodeToString(head) + "." + enc.EncodeToString(body)
	m := hmac.New(sha256.New, []byte("not Entra ID's key"))
	m.Write([]byte(unsigned))
	return unsigned + "." + enc.EncodeToString(m.Sum(nil))
}

// TestOAuthBasic: issuer, audience and lifetime decide; a refusal is 401
// InvalidAuthenticationInfo with the reason and Azure's challenge; a
// request that is not Bearer is not the authenticator's; plain HTTP is
// refused; FileREST wants x-ms-file-request-intent: backup.
func TestOAuthBasic(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	good := func() map[string]any {
		return map[string]any{
			"iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
			"aud": "https://storage.azure.com",
			"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
			"tid": "72f988bf-86f1-41af-91ab-2d7cd011db47",
		}
	}
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	for _, tt := range []struct {
		name    string
		service string
		claims  map[string]any
		auth    string // instead of a token from claims
		plain   bool   // no TLS
		intent  string
		verdict Verdict
		status  int
		code    string
		detail  string
	}{
		{name: "storage audience", service: "blob", claims: good(), verdict: Pass},
		{name: "storage audience with slash", service: "queue", claims: with("aud", "https://storage.azure.com/"), verdict: Pass},
		{name: "application id", service: "blob", claims: with("aud", "e406a681-f3d4-42a8-90b6-c2b029497af1"), verdict: Pass},
		{name: "account endpoint", service: "blob", claims: with("aud", "https://devstoreaccount1.blob.core.windows.net"), verdict: Pass},
		{name: "audience array", service: "queue", claims: with("aud", []string{"x", "https://devstoreaccount1.queue.core.windows.net/"}), verdict: Pass},
		{name: "other account", service: "blob", claims: with("aud", "https://other.blob.core.windows.net"), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo, detail: "Audience validation failed. Audience did not match."},
		{name: "other service", service: "queue", claims: with("aud", "https://devstoreaccount1.blob.core.windows.net"), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo, detail: "Audience validation failed. Audience did not match."},
		{name: "bad audience", service: "blob", claims: with("aud", "https://management.azure.com"), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo, detail: "Audience validation failed. Audience did not match."},
		{name: "bad issuer", service: "blob", claims: with("iss", "https://evil.example/"), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo, detail: "Issuer validation failed. Issuer did not match."},
		{name: "expired", service: "blob", claims: with("exp", now.Add(-time.Second).Unix()), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo, detail: "Lifetime validation failed. The token is expired."},
		{name: "not yet valid", service: "blob", claims: with("nbf", now.Add(time.Minute).Unix()), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo, detail: "Lifetime validation failed. The token is not yet valid."},
		{name: "no exp", service: "blob", claims: with("exp", nil), verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo},
		{name: "not a JWT", service: "blob", auth: "Bearer abc", verdict: Fail,
			status: 401, code: CodeInvalidAuthenticationInfo},
		{name: "over HTTP", service: "blob", claims: good(), plain: true, verdict: Fail,
			status: 403, code: CodeAuthenticationFailed, detail: "Authentication scheme Bearer is not allowed with HTTP."},
		{name: "SharedKey is not mine", service: "blob", auth: "SharedKey devstoreaccount1:abc", verdict: NotMine},
		{name: "no header is not mine", service: "blob", auth: "-", verdict: NotMine},
		{name: "file with intent", service: "file", claims: good(), intent: "backup", verdict: Pass},
		{name: "file without intent", service: "file", claims: good(), verdict: Fail,
			status: 400, code: CodeMissingRequiredHeader},
		{name: "file with another intent", service: "file", claims: good(), intent: "restore", verdict: Fail,
			status: 400, code: CodeInvalidHeaderValue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := OAuth{Account: "devstoreaccount1", Service: tt.service}
			if tt.service == "file" {
				a.FileIntent = func(*http.Request) bool { return true }
			}
			r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c", nil) // r.TLS set below
			if !tt.plain {
				r.TLS = &tls.ConnectionState{}
			}
			switch {
			case tt.auth == "-":
			case tt.auth != "":
				r.Header.Set("Authorization", tt.auth)
			default:
				r.Header.Set("Authorization", "Bearer "+signedJWT(t, tt.claims))
			}
			if tt.intent != "" {
				r.Header.Set("x-ms-file-request-intent", tt.intent)
			}
			v, g, err := a.Authenticate(r, now)
			if v != tt.verdict {
				t.Fatalf("verdict %v (%v), want %v", v, err, tt.verdict)
			}
			if v == Pass && g.SAS != nil {
				t.Fatalf("a token passed as a SAS grant: %+v", g.SAS)
			}
			if v != Fail {
				return
			}
			e := Classify(err, nil)
			if e.Status != tt.status || e.Code != tt.code {
				t.Fatalf("%d %s (%v), want %d %s", e.Status, e.Code, err, tt.status, tt.code)
			}
			if tt.detail != "" && (len(e.Details) == 0 || e.Details[0].Value != tt.detail) {
				t.Errorf("details %+v, want AuthenticationErrorDetail %q", e.Details, tt.detail)
			}
			if e.Status == http.StatusUnauthorized {
				tid := "common"
				if tt.claims != nil {
					tid = tt.claims["tid"].(string)
				}
				want := "Bearer authorization_uri=https://login.microsoftonline.com/" + tid + "/oauth2/authorize resource_id=https://storage.azure.com"
				if e.Challenge != want {
					t.Errorf("challenge %q, want %q", e.Challenge, want)
				}
				w := httptest.NewRecorder()
				h := RequestID(time.Now, Authenticate([]Authenticator{fixedAuth{now, a}}, slog.New(slog.DiscardHandler), nil))
				h.ServeHTTP(w, r)
				if got := w.Header().Get("WWW-Authenticate"); w.Code != http.StatusUnauthorized || got != want {
					t.Errorf("%d, WWW-Authenticate %q, want 401 and %q", w.Code, got, want)
				}
			}
		})
	}
}

// TestSharedKeyMismatchLogsStringToSign: with a wrong key the answer is
// 403 AuthenticationFailed without the string-to-sign, and the chain's
// debug line carries the string the server signed.
func TestSharedKeyMismatchLogsStringToSign(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sg := Signer{Account: "devstoreaccount1", Key: []byte("the server's key")}
	chain := []Authenticator{SharedKey{Signer: sg, StringToSign: StringToSign}}
	h := RequestID(time.Now, Authenticate(chain, log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request signed with another key reached the handler")
	})))
	r := httptest.NewRequest("GET", "http://127.0.0.1:10000/devstoreaccount1/c?restype=container", nil)
	r.Header.Set("x-ms-date", "Sat, 28 Nov 2026 09:00:00 GMT")
	r.Header.Set("x-ms-version", "2025-01-05")
	other := Signer{Account: "devstoreaccount1", Key: []byte("the client's key")}
	sts := StringToSign("devstoreaccount1", r)
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+other.Sign(sts))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || w.Header().Get(ErrorCodeHeader) != CodeAuthenticationFailed {
		t.Fatalf("%d %s, want 403 AuthenticationFailed", w.Code, w.Header().Get(ErrorCodeHeader))
	}
	if strings.Contains(w.Body.String(), "x-ms-date") {
		t.Errorf("the answer carries the string-to-sign: %s", w.Body)
	}
	quoted, _ := json.Marshal(sts) // slog quotes like Go: the same escapes for this ASCII string
	line := logs.String()
	if !strings.Contains(line, `msg="authentication failed"`) || !strings.Contains(line, strings.ReplaceAll(string(quoted[1:len(quoted)-1]), `\`, `\\`)) {
		t.Errorf("debug log lacks the string-to-sign %q:\n%s", sts, line)
	}
}

// fixedAuth runs an authenticator at a fixed time, whatever the request's
// start.
type fixedAuth struct {
	now time.Time
	a   Authenticator
}

func (f fixedAuth) Authenticate(r *http.Request, _ time.Time) (Verdict, Grant, error) {
	return f.a.Authenticate(r, f.now)
}

// TestCopySourceBearer: a From-URL source authorized by
// x-ms-copy-source-authorization passes with a good token when the SAS
// authenticator has a SourceToken, and is 403 CannotVerifyCopySource with
// a bad token or without one.
func TestCopySourceBearer(t *testing.T) {
	now := time.Now()
	claims := func(exp time.Time) map[string]any {
		return map[string]any{"iss": "https://sts.windows.net/t/", "aud": "https://storage.azure.com",
			"nbf": now.Add(-time.Minute).Unix(), "exp": exp.Unix()}
	}
	oauth := OAuth{Account: "devstoreaccount1", Service: "blob"}
	for _, tt := range []struct {
		name   string
		source Authenticator
		token  string
		ok     bool
	}{
		{"good token", oauth, signedJWT(t, claims(now.Add(time.Hour))), true},
		{"expired token", oauth, signedJWT(t, claims(now.Add(-time.Second))), false},
		{"no --oauth", nil, signedJWT(t, claims(now.Add(time.Hour))), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := SAS{Signer: Signer{Account: "devstoreaccount1", Key: []byte("k")}, Service: 'b', SourceToken: tt.source}
			dst := httptest.NewRequest("PUT", "http://127.0.0.1:10000/devstoreaccount1/c/dst", nil)
			dst.TLS = &tls.ConnectionState{}
			dst.Header.Set("x-ms-copy-source-authorization", "Bearer "+tt.token)
			dst = dst.WithContext(context.WithValue(dst.Context(), infoKey{}, &Info{Start: now}))
			err := a.AuthorizeCopySource(dst, "x-ms-copy-source", "https://127.0.0.1:10000/devstoreaccount1/c/src")
			if tt.ok != (err == nil) {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				if e := Classify(err, nil); e.Status != http.StatusForbidden || e.Code != CodeCannotVerifyCopySource {
					t.Fatalf("%d %s, want 403 CannotVerifyCopySource", e.Status, e.Code)
				}
			}
		})
	}
}
