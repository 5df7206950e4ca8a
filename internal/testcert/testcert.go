package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Set is a CA and two certificates it signed.
type Set struct {
	CAPool *x509.CertPool
	// PEM encodings, as written by WriteFiles.
	CAPEM, ServerCertPEM, ServerKeyPEM, ClientCertPEM, ClientKeyPEM []byte
	Server, Client                                                  tls.Certificate
}

// New makes a CA and a server and a client certificate signed by it.
func New() (*Set, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "minikafka test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	s := &Set{CAPool: x509.NewCertPool(), CAPEM: pemBlock("CERTIFICATE", caDER)}
	s.CAPool.AddCert(ca)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) (tls.Certificate, []byte, []byte, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return tls.Certificate{}, nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return tls.Certificate{}, nil, nil, err
		}
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return tls.Certificate{}, nil, nil, err
		}
		certPEM, keyPEM := pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", kder)
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		return c, certPEM, keyPEM, err
	}
	if s.Server, s.ServerCertPEM, s.ServerKeyPEM, err = leaf(2, "minikafka test server", x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	if s.Client, s.ClientCertPEM, s.ClientKeyPEM, err = leaf(3, "minikafka test client", x509.ExtKeyUsageClientAuth); err != nil {
		return nil, err
	}
	return s, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// ServerConfig serves the server certificate; with mutual, clients must
// present a certificate signed by the CA.
func (s *Set) ServerConfig(mutual bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{s.Server}, MinVersion: tls.VersionTLS12}
	if mutual {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = s.CAPool
	}
	return cfg
}

// ClientConfig trusts the CA; withCert adds the client certificate.
func (s *Set) ClientConfig(withCert bool) *tls.Config {
	cfg := &tls.Config{RootCAs: s.CAPool, MinVersion: tls.VersionTLS12}
	if withCert {
		cfg.Certificates = []tls.Certificate{s.Client}
	}
	return cfg
}

// Files are the paths WriteFiles wrote.
type Files struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// WriteFiles writes the PEM files into dir.
func (s *Set) WriteFiles(dir string) (Files, error) {
	f := Files{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"),
		ClientKey:  filepath.Join(dir, "client-key.pem"),
	}
	for path, data := range map[string][]byte{
		f.CA: s.CAPEM, f.ServerCert: s.ServerCertPEM, f.ServerKey: s.ServerKeyPEM,
		f.ClientCert: s.ClientCertPEM, f.ClientKey: s.ClientKeyPEM,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, fmt.Errorf("testcert: %w", err)
		}
	}
	return f, nil
}
