// Package testcert makes certificates for tests of TLS: a CA, a server
// certificate for 127.0.0.1 and localhost, and a client certificate, all
// signed by the CA, written as PEM files.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Set is the files of a CA and the certificates it signed.
type Set struct {
	CA                    string // the CA's certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	// Pool holds the CA, for a test's own TLS configs.
	Pool *x509.CertPool
}

// Server is the server's key pair.
func (s *Set) Server(t testing.TB) tls.Certificate {
	t.Helper()
	return keyPair(t, s.ServerCert, s.ServerKey)
}

// Client is the client's key pair.
func (s *Set) Client(t testing.TB) tls.Certificate {
	t.Helper()
	return keyPair(t, s.ClientCert, s.ClientKey)
}

// keyPair loads the key pair of the files cert and key, or stops the test.
func keyPair(t testing.TB, cert, key string) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// New writes a CA, a server and a client certificate into dir.
func New(t testing.TB, dir string) *Set {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "policyrun test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(err)
	ca, err := x509.ParseCertificate(caDER)
	must(err)
	s := &Set{CA: filepath.Join(dir, "ca.pem"), Pool: x509.NewCertPool()}
	s.Pool.AddCert(ca)
	must(os.WriteFile(s.CA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		must(err)
		kder, err := x509.MarshalECPrivateKey(key)
		must(err)
		certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		must(os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
		must(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
		return certFile, keyFile
	}
	s.ServerCert, s.ServerKey = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	s.ClientCert, s.ClientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return s
}
