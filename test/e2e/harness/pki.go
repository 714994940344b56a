package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// pki is the set of credentials one control plane uses, written to dir.
// Everything is generated in-process (no openssl): a CA, the API server's
// serving certificate for 127.0.0.1, an admin client certificate in
// system:masters, the service-account signing key, and a bearer token for
// the same admin (for tools that prefer tokens).
type pki struct {
	dir                    string
	caCert, caKey          string
	serverCert, serverKey  string
	adminCert, adminKey    string
	saKey, saPub           string
	tokenFile, token       string
	caPEM, adminCertPEM    []byte
	adminKeyPEM            []byte
	caPool                 *x509.CertPool
	caTemplate             *x509.Certificate
	caPrivate              *ecdsa.PrivateKey
	notBefore, notAfter    time.Time
	serialSeq              int64
	mu                     sync.Mutex
	serverIPs, serverNames []string
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		dir:         dir,
		notBefore:   time.Now().Add(-time.Hour),
		notAfter:    time.Now().Add(7 * 24 * time.Hour),
		serverIPs:   []string{"127.0.0.1"},
		serverNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
	if err := p.generate(); err != nil {
		return nil, fmt.Errorf("generating certificates in %s: %w", dir, err)
	}
	return p, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func (p *pki) generate() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	p.caTemplate = &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubedra-e2e-ca"},
		NotBefore:             p.notBefore,
		NotAfter:              p.notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, p.caTemplate, p.caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	p.caTemplate, _ = x509.ParseCertificate(der)
	p.caPrivate = caKey
	p.serialSeq = 1
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	p.caCert, p.caKey = p.path("ca.crt"), p.path("ca.key")
	if err := writePEM(p.caCert, p.caPEM); err != nil {
		return err
	}
	if err := writeKey(p.caKey, caKey); err != nil {
		return err
	}
	p.caPool = x509.NewCertPool()
	p.caPool.AppendCertsFromPEM(p.caPEM)

	ips := make([]net.IP, 0, len(p.serverIPs))
	for _, s := range p.serverIPs {
		ips = append(ips, net.ParseIP(s))
	}
	p.serverCert, p.serverKey = p.path("apiserver.crt"), p.path("apiserver.key")
	if _, _, err := p.leaf(p.serverCert, p.serverKey, pkix.Name{CommonName: "kube-apiserver"},
		x509.ExtKeyUsageServerAuth, ips, p.serverNames); err != nil {
		return err
	}
	p.adminCert, p.adminKey = p.path("admin.crt"), p.path("admin.key")
	if p.adminCertPEM, p.adminKeyPEM, err = p.leaf(p.adminCert, p.adminKey,
		pkix.Name{CommonName: "kubedra-e2e-admin", Organization: []string{"system:masters"}},
		x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	p.saKey, p.saPub = p.path("sa.key"), p.path("sa.pub")
	if err := writeKey(p.saKey, saKey); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})); err != nil {
		return err
	}

	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	p.token = hex.EncodeToString(tok)
	p.tokenFile = p.path("tokens.csv")
	return os.WriteFile(p.tokenFile, []byte(p.token+`,kubedra-e2e-admin,kubedra-e2e-admin,"system:masters"`+"\n"), 0o600)
}

// leaf issues a certificate signed by the CA and writes it and its key.
func (p *pki) leaf(certPath, keyPath string, subject pkix.Name, usage x509.ExtKeyUsage, ips []net.IP, dns []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	p.serialSeq++
	serial := p.serialSeq
	p.mu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      subject,
		NotBefore:    p.notBefore,
		NotAfter:     p.notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caTemplate, &key.PublicKey, p.caPrivate)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writePEM(certPath, certPEM); err != nil {
		return nil, nil, err
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, err
	}
	keyPEM, err = os.ReadFile(keyPath)
	return certPEM, keyPEM, err
}

func writePEM(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}
