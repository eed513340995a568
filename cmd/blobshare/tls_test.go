package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	blobsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	filesas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	queuesas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/blobshare/blobshare/integration/servetest"
	"github.com/blobshare/blobshare/storagehttp"
)

// testCA writes a CA and a server certificate for 127.0.0.1 it signed
// into dir, and returns the certificate and key files and a pool that
// trusts the CA.
func testCA(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "blobshare test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return certFile, keyFile, pool
}

// tokenCredential is an azcore.TokenCredential that hands out one JWT.
type tokenCredential struct{ token string }

func (c tokenCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// makeJWT is an HMAC-signed JWT with Entra ID's claims; change edits them.
func makeJWT(t *testing.T, change func(map[string]any)) string {
	t.Helper()
	now := time.Now()
	claims := map[string]any{
		"iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		"aud": "https://storage.azure.com",
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
		"tid": "72f988bf-86f1-41af-91ab-2d7cd011db47", "oid": "11059fcc-5514-4800-b5f8-49808b9cfab6",
	}
	if change != nil {
		change(claims)
	}
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	unsigned := enc.EncodeToString(head) + "." + enc.EncodeToString(body)
	m := hmac.New(sha256.New, []byte("a key no server knows"))
	m.Write([]byte(unsigned))
	return unsigned + "." + enc.EncodeToString(m.Sum(nil))
}

// TestServeTLSAndOAuth: with --tls-cert/--tls-key every HTTP endpoint
// serves HTTPS (its logged URL says so) to the official SDKs trusting the
// test's CA, with SharedKey, with a SAS signed spr=https (refused by a
// plain-HTTP serve), and with --oauth basic bearer tokens, also as a
// From-URL copy's source authorization; a token with a bad audience or
// issuer, or expired, is 401 InvalidAuthenticationInfo with Azure's
// challenge (403 CannotVerifyCopySource for a copy source).
func TestServeTLSAndOAuth(t *testing.T) {
	ctx := context.Background()
	certFile, keyFile, pool := testCA(t, t.TempDir())
	srv, err := servetest.Start(blobshareBinary(t), t.TempDir(), "--smb", "off",
		"--tls-cert", certFile, "--tls-key", keyFile, "--oauth", "basic")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	for name, u := range map[string]string{"FileREST": srv.RESTURL, "Blob": srv.BlobURL, "Queue": srv.QueueURL} {
		if !strings.HasPrefix(u, "https://127.0.0.1:") {
			t.Fatalf("%s logged %q, want an https:// URL", name, u)
		}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	opts := policy.ClientOptions{Transport: hc, Retry: policy.RetryOptions{MaxRetries: -1}}
	key, err := azblob.NewSharedKeyCredential(storagehttp.DevAccount, storagehttp.DevKey)
	if err != nil {
		t.Fatal(err)
	}

	// Plain HTTP to a TLS port is refused by the transport.
	if resp, err := http.Get(strings.Replace(srv.BlobURL, "https://", "http://", 1) + "?comp=list"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS Blob port: %d", resp.StatusCode)
		}
	}

	t.Run("Blob", func(t *testing.T) {
		c, err := azblob.NewClientWithSharedKeyCredential(srv.BlobURL, key, &azblob.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateContainer(ctx, "tls", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UploadBuffer(ctx, "tls", "a.txt", []byte("over TLS"), nil); err != nil {
			t.Fatal(err)
		}
		// A container SAS that insists on HTTPS.
		sasQuery, err := blobsas.BlobSignatureValues{
			Protocol: blobsas.ProtocolHTTPS, ExpiryTime: time.Now().Add(time.Hour), ContainerName: "tls",
			Permissions: to.Ptr(blobsas.ContainerPermissions{Read: true, List: true}).String(),
		}.SignWithSharedKey(key)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := container.NewClientWithNoCredential(srv.BlobURL+"/tls?"+sasQuery.Encode(), &container.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		got, err := sc.NewBlobClient("a.txt").DownloadStream(ctx, nil)
		if err != nil {
			t.Fatalf("spr=https SAS over https: %v", err)
		}
		body, _ := io.ReadAll(got.Body)
		got.Body.Close()
		if string(body) != "over TLS" {
			t.Fatalf("read %q", body)
		}
		// The same SAS over plain HTTP, at a serve without TLS.
		plain, err := servetest.Start(blobshareBinary(t), t.TempDir(), "--smb", "off", "--queue-addr", "off")
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Stop()
		pc, err := container.NewClientWithNoCredential(plain.BlobURL+"/tls?"+sasQuery.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = pc.NewBlobClient("a.txt").DownloadStream(ctx, nil)
		wantCode(t, err, http.StatusForbidden, "AuthorizationProtocolMismatch")

		// A bearer token.
		oc, err := azblob.NewClient(srv.BlobURL, tokenCredential{makeJWT(t, nil)}, &azblob.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oc.UploadBuffer(ctx, "tls", "token.txt", []byte("by token"), nil); err != nil {
			t.Fatalf("upload with a bearer token: %v", err)
		}
		got, err = oc.DownloadStream(ctx, "tls", "token.txt", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(got.Body)
		got.Body.Close()
		if string(body) != "by token" {
			t.Fatalf("read %q", body)
		}
		// A From-URL copy whose source is authorized by a bearer token
		// (x-ms-copy-source-authorization), and one whose token is bad.
		tok := makeJWT(t, nil)
		dst := oc.ServiceClient().NewContainerClient("tls").NewBlockBlobClient("copy.txt")
		if _, err := dst.UploadBlobFromURL(ctx, srv.BlobURL+"/tls/token.txt",
			&blockblob.UploadBlobFromURLOptions{CopySourceAuthorization: to.Ptr("Bearer " + tok)}); err != nil {
			t.Fatalf("Put Blob From URL with a bearer-token source: %v", err)
		}
		got, err = dst.DownloadStream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(got.Body)
		got.Body.Close()
		if string(body) != "by token" {
			t.Fatalf("the copy holds %q", body)
		}
		expiredTok := makeJWT(t, func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() })
		_, err = dst.UploadBlobFromURL(ctx, srv.BlobURL+"/tls/token.txt",
			&blockblob.UploadBlobFromURLOptions{CopySourceAuthorization: to.Ptr("Bearer " + expiredTok)})
		wantCode(t, err, http.StatusForbidden, storagehttp.CodeCannotVerifyCopySource)

		for name, change := range map[string]func(map[string]any){
			"bad audience": func(c map[string]any) { c["aud"] = "https://vault.azure.net" },
			"bad issuer":   func(c map[string]any) { c["iss"] = "https://accounts.example.com/" },
			"expired":      func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() },
		} {
			bc, err := azblob.NewClient(srv.BlobURL, tokenCredential{makeJWT(t, change)}, &azblob.ClientOptions{ClientOptions: opts})
			if err != nil {
				t.Fatal(err)
			}
			_, err = bc.DownloadStream(ctx, "tls", "token.txt", nil)
			t.Run(name, func(t *testing.T) { wantChallenge(t, err) })
		}
	})

	t.Run("Queue", func(t *testing.T) {
		qkey, err := azqueue.NewSharedKeyCredential(storagehttp.DevAccount, storagehttp.DevKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azqueue.NewServiceClientWithSharedKeyCredential(srv.QueueURL, qkey, &azqueue.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateQueue(ctx, "tls", nil); err != nil {
			t.Fatal(err)
		}
		// A queue SAS that insists on HTTPS.
		sasQuery, err := queuesas.QueueSignatureValues{
			Protocol: queuesas.ProtocolHTTPS, ExpiryTime: time.Now().Add(time.Hour), QueueName: "tls",
			Permissions: to.Ptr(queuesas.QueuePermissions{Read: true, Add: true}).String(),
		}.SignWithSharedKey(qkey)
		if err != nil {
			t.Fatal(err)
		}
		sq, err := azqueue.NewQueueClientWithNoCredential(srv.QueueURL+"/tls?"+sasQuery.Encode(), &azqueue.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sq.EnqueueMessage(ctx, "by SAS", nil); err != nil {
			t.Fatalf("spr=https SAS over https: %v", err)
		}
		if got, err := sq.PeekMessage(ctx, nil); err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != "by SAS" {
			t.Fatalf("peek with the SAS: %+v, %v", got, err)
		}
		if _, err := c.NewQueueClient("tls").ClearMessages(ctx, nil); err != nil {
			t.Fatal(err)
		}
		oc, err := azqueue.NewServiceClient(srv.QueueURL, tokenCredential{makeJWT(t, nil)}, &azqueue.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		q := oc.NewQueueClient("tls")
		if _, err := q.EnqueueMessage(ctx, "by token", nil); err != nil {
			t.Fatalf("enqueue with a bearer token: %v", err)
		}
		got, err := q.DequeueMessage(ctx, nil)
		if err != nil || len(got.Messages) != 1 || *got.Messages[0].MessageText != "by token" {
			t.Fatalf("dequeue with a bearer token: %+v, %v", got, err)
		}
		bad, err := azqueue.NewServiceClient(srv.QueueURL, tokenCredential{makeJWT(t, func(c map[string]any) {
			c["aud"] = "https://" + storagehttp.DevAccount + ".blob.core.windows.net" // the Blob service's audience
		})}, &azqueue.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.NewQueueClient("tls").PeekMessage(ctx, nil)
		wantChallenge(t, err)
	})

	t.Run("Table", func(t *testing.T) {
		if !strings.HasPrefix(srv.TableURL, "https://") {
			t.Fatalf("Table logged %q", srv.TableURL)
		}
		tkey, err := aztables.NewSharedKeyCredential(storagehttp.DevAccount, storagehttp.DevKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := aztables.NewServiceClientWithSharedKey(srv.TableURL, tkey, &aztables.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateTable(ctx, "tls", nil); err != nil {
			t.Fatal(err)
		}
		oc, err := aztables.NewServiceClient(srv.TableURL, tokenCredential{makeJWT(t, nil)}, &aztables.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		ent, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "V": "by token"})
		if _, err := oc.NewClient("tls").AddEntity(ctx, ent, nil); err != nil {
			t.Fatalf("add an entity with a bearer token: %v", err)
		}
		bad, err := aztables.NewServiceClient(srv.TableURL, tokenCredential{makeJWT(t, func(c map[string]any) { c["iss"] = "https://x.example/" })}, &aztables.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.NewClient("tls").GetEntity(ctx, "p", "r", nil)
		wantChallenge(t, err)
	})

	t.Run("FileREST", func(t *testing.T) {
		fkey, err := service.NewSharedKeyCredential(storagehttp.DevAccount, storagehttp.DevKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := service.NewClientWithSharedKeyCredential(srv.RESTURL, fkey, &service.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		// Shares are made with the key: Azure manages shares over OAuth
		// only through the resource provider.
		if _, err := c.NewShareClient("tls").Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
		fc := c.NewShareClient("tls").NewRootDirectoryClient().NewFileClient("a.txt")
		if _, err := fc.Create(ctx, 8, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := fc.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("over TLS"))), nil); err != nil {
			t.Fatal(err)
		}
		// A share SAS that insists on HTTPS.
		sasQuery, err := filesas.SignatureValues{
			Protocol: filesas.ProtocolHTTPS, ExpiryTime: time.Now().Add(time.Hour), ShareName: "tls",
			Permissions: to.Ptr(filesas.SharePermissions{Read: true}).String(),
		}.SignWithSharedKey(fkey)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := file.NewClientWithNoCredential(srv.RESTURL+"/tls/a.txt?"+sasQuery.Encode(), &file.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, sf); got != "over TLS" {
			t.Fatalf("spr=https SAS read %q", got)
		}

		intent := to.Ptr(service.ShareTokenIntentBackup)
		oc, err := service.NewClient(srv.RESTURL, tokenCredential{makeJWT(t, nil)}, &service.ClientOptions{ClientOptions: opts, FileRequestIntent: intent})
		if err != nil {
			t.Fatal(err)
		}
		tf := oc.NewShareClient("tls").NewRootDirectoryClient().NewFileClient("token.txt")
		if _, err := tf.Create(ctx, 8, nil); err != nil {
			t.Fatalf("create a file with a bearer token: %v", err)
		}
		if _, err := tf.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("by token"))), nil); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, tf); got != "by token" {
			t.Fatalf("read %q", got)
		}
		// Without the intent FileREST refuses a token.
		ni, err := share.NewClient(srv.RESTURL+"/tls", tokenCredential{makeJWT(t, nil)}, &share.ClientOptions{ClientOptions: opts})
		if err != nil {
			t.Fatal(err)
		}
		_, err = ni.NewRootDirectoryClient().NewFileClient("a.txt").GetProperties(ctx, nil)
		wantCode(t, err, http.StatusBadRequest, "MissingRequiredHeader")
		_, err = ni.NewRootDirectoryClient().GetProperties(ctx, nil) // the root directory: a directory operation
		wantCode(t, err, http.StatusBadRequest, "MissingRequiredHeader")
		// Share-level operations take a token without the intent, as on
		// Azure (the SDK sends none there).
		if _, err := ni.GetProperties(ctx, nil); err != nil {
			t.Fatalf("Get Share Properties with a token and no intent: %v", err)
		}
		expired, err := service.NewClient(srv.RESTURL, tokenCredential{makeJWT(t, func(c map[string]any) {
			c["exp"] = time.Now().Add(-time.Minute).Unix()
		})}, &service.ClientOptions{ClientOptions: opts, FileRequestIntent: intent})
		if err != nil {
			t.Fatal(err)
		}
		_, err = expired.NewShareClient("tls").NewRootDirectoryClient().NewFileClient("a.txt").GetProperties(ctx, nil)
		wantChallenge(t, err)
	})
}

func readFile(t *testing.T, fc *file.Client) string {
	t.Helper()
	got, err := fc.DownloadStream(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	b, err := io.ReadAll(got.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantCode checks that err is an Azure answer with status and code.
func wantCode(t *testing.T, err error, status int, code string) *azcore.ResponseError {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %d %s, want %d %s", re.StatusCode, re.ErrorCode, status, code)
	}
	return re
}

// wantChallenge checks a refused bearer token: 401
// InvalidAuthenticationInfo with Azure's WWW-Authenticate challenge.
func wantChallenge(t *testing.T, err error) {
	t.Helper()
	re := wantCode(t, err, http.StatusUnauthorized, storagehttp.CodeInvalidAuthenticationInfo)
	const want = "Bearer authorization_uri=https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/authorize resource_id=https://storage.azure.com"
	if got := re.RawResponse.Header.Get("WWW-Authenticate"); got != want {
		t.Errorf("WWW-Authenticate %q, want %q", got, want)
	}
}
