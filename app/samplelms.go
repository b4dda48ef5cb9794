package app

import (
	"crypto/rsa"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/keptfile"
	"github.com/ssobridge/ssobridge/wayin/lti"
)

// The embedded demo's sample LMS: an LTI 1.3 platform the demo serves on
// a free loopback port and registers, while lti.platforms lists none, so
// LTI can be tried without an LMS. Its issuer is a name, not its address:
// the port changes at every start, and the accounts it made stay its own.
const (
	sampleLMSKeyFile  = "lms-demo.key"
	SampleLMSIssuer   = "https://sample-lms.ssobridge.invalid"
	sampleLMSClientID = "ssobridge-demo"
	sampleLMSDomain   = "school.example"
	// SampleLMSName is the platform's name on pages and in the audit.
	SampleLMSName = "Sample LMS (demo)"
)

// sampleLMSOn reports whether cfg gets the sample LMS: the embedded demo
// with no LMS of its own.
func sampleLMSOn(cfg config.Config) bool {
	return cfg.Platform.BaseURL == config.Embedded && !config.Settings(cfg, lti.Section()).Enabled()
}

// startSampleLMS serves the sample LMS (its key kept in the data
// directory, so launches signed before a restart still verify) with a
// learner and an instructor, and returns cfg with it registered as
// lti.platforms[0]. tool is the bridge's URL as browsers reach it (Serve
// sets it again once it listens).
func startSampleLMS(cfg config.Config, tool string) (config.Config, *samplelms.Running, error) {
	key, err := sampleLMSKey(cfg)
	if err != nil {
		return cfg, nil, err
	}
	l := samplelms.New(tool, key)
	l.Issuer, l.ClientID, l.DeploymentID = SampleLMSIssuer, sampleLMSClientID, "demo"
	l.AddUser("ada", samplelms.User{Sub: "sample-lms-ada", Email: "ada.lovelace@" + sampleLMSDomain, GivenName: "Ada", FamilyName: "Lovelace",
		Roles: []string{samplelms.RoleLearner}})
	l.AddUser("alan", samplelms.User{Sub: "sample-lms-alan", Email: "alan.turing@" + sampleLMSDomain, GivenName: "Alan", FamilyName: "Turing",
		Roles: []string{samplelms.RoleInstructor}})
	// Its roster (NRPS): an instructor's launch provisions the learner.
	l.OfferRoster([]samplelms.Member{
		{UserID: "sample-lms-ada", Email: "ada.lovelace@" + sampleLMSDomain, GivenName: "Ada", FamilyName: "Lovelace", Roles: []string{samplelms.RoleLearner}},
		{UserID: "sample-lms-alan", Email: "alan.turing@" + sampleLMSDomain, GivenName: "Alan", FamilyName: "Turing", Roles: []string{samplelms.RoleInstructor}},
	}, 10)
	running, err := samplelms.Start(l, "127.0.0.1:0")
	if err != nil {
		return cfg, nil, err
	}
	s := config.Settings(cfg, lti.Section())
	s.Platforms = lti.ConfiguredPlatforms{{Name: SampleLMSName, Issuer: SampleLMSIssuer, ClientID: sampleLMSClientID,
		DeploymentIDs: "demo", AuthURL: running.AuthURL(), JWKSURL: running.URL() + samplelms.JWKSPath, TokenURL: running.TokenURL(),
		CreateAccounts: true, EmailDomains: sampleLMSDomain,
		DeepLinkItems: []lti.DeepLinkItem{{Title: "Make a trailer", Path: "/editor/templates/trailer"}}}}
	s.SampleLMS.Origin, s.SampleLMS.Issuer = lti.Origin(running.URL()), SampleLMSIssuer
	return config.WithSettings(cfg, lti.Section(), s), running, nil
}

// WithSampleLMS is cfg with the sample LMS started and registered when
// cfg gets one (see sampleLMSOn), for a command that checks the
// configuration the demo serves; stop ends it. The LMS takes a free port,
// so this works beside a running demo.
func WithSampleLMS(cfg config.Config) (_ config.Config, stop func() error, _ error) {
	if !sampleLMSOn(cfg) {
		return cfg, func() error { return nil }, nil
	}
	cfg, running, err := startSampleLMS(cfg, cfg.PublicURL(cfg.Server.Addr))
	if err != nil {
		return cfg, nil, err
	}
	return cfg, running.Close, nil
}

// sampleLMSKey is the sample LMS's signing key, made once (0600; one
// that does not read as a key is made anew).
func sampleLMSKey(cfg config.Config) (*rsa.PrivateKey, error) {
	data, err := keptfile.Read(cfg.DataDir(), sampleLMSKeyFile,
		func(data []byte) bool { _, err := lti.ParseRSAKey(data); return err == nil }, lti.GenerateKeyPEM)
	if err != nil {
		return nil, err
	}
	return lti.ParseRSAKey(data)
}
