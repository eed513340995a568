package sdklive

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// The identity the SDK tests' token credential asks for: the recording
// package's credential.New builds a ClientSecretCredential from
// AZURE_SERVICE_DIRECTORY's <name>_CLIENT_ID/_CLIENT_SECRET/_TENANT_ID.
const (
	identityDir    = "SDKLIVE"
	identityTenant = "11111111-2222-3333-4444-555555555555"
	identityClient = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	loginHost      = "login.microsoftonline.com"
)

// identityEnv are the variables that make credential.New ask the fake
// token service.
func identityEnv() []string {
	return []string{
		"AZURE_SERVICE_DIRECTORY=" + identityDir,
		identityDir + "_CLIENT_ID=" + identityClient,
		identityDir + "_CLIENT_SECRET=sdklive-secret",
		identityDir + "_TENANT_ID=" + identityTenant,
	}
}

// startIdentity serves the three requests a client-secret credential
// makes of Entra ID (instance discovery, the tenant's OpenID
// configuration, the token endpoint) over TLS with the harness's
// certificate; the proxy sends login.microsoftonline.com to it. Its
// tokens are what --oauth basic checks: issuer https://sts.windows.net/
// TENANT/, the audience the scope asked for, an hour's lifetime. Their
// signature is not a signature: nothing checks it (Azurite's and
// blobshare's basic level do not).
func startIdentity(c certs) (*httptest.Server, error) {
	pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
	if err != nil {
		return nil, err
	}
	base := "https://" + loginHost + "/"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /common/discovery/instance", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"tenant_discovery_endpoint": base + identityTenant + "/v2.0/.well-known/openid-configuration",
			"api-version":               "1.1",
			"metadata": []map[string]any{{
				"preferred_network": loginHost, "preferred_cache": "login.windows.net",
				"aliases": []string{loginHost, "login.windows.net", "sts.windows.net"},
			}},
		})
	})
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		tenant := r.PathValue("tenant")
		writeJSON(w, map[string]any{
			"authorization_endpoint":        base + tenant + "/oauth2/v2.0/authorize",
			"token_endpoint":                base + tenant + "/oauth2/v2.0/token",
			"issuer":                        base + tenant + "/v2.0",
			"device_authorization_endpoint": base + tenant + "/oauth2/v2.0/devicecode",
		})
	})
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("client_id") != identityClient {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_client"})
			return
		}
		var auds []string
		for _, scope := range strings.Fields(r.Form.Get("scope")) {
			if aud, ok := strings.CutSuffix(scope, "/.default"); ok {
				auds = append(auds, aud)
			}
		}
		if len(auds) != 1 {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_scope"})
			return
		}
		now := time.Now()
		claims := map[string]any{
			"iss": "https://sts.windows.net/" + r.PathValue("tenant") + "/",
			"aud": auds[0], "tid": r.PathValue("tenant"), "appid": identityClient,
			"oid": identityClient, "sub": identityClient,
			"iat": now.Unix(), "nbf": now.Add(-5 * time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
		}
		writeJSON(w, map[string]any{
			"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600,
			"access_token": jwtPart(map[string]any{"typ": "JWT", "alg": "RS256"}) + "." + jwtPart(claims) + "." +
				base64.RawURLEncoding.EncodeToString([]byte("unsigned")),
		})
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	return srv, nil
}

func jwtPart(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
