package lti

import (
	"crypto/rsa"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/demo/samplelms"
	"github.com/ssobridge/ssobridge/internal/keptfile"
	"github.com/ssobridge/ssobridge/wayin"
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
	return cfg.Platform.BaseURL == config.Embedded && !config.Settings(cfg, Section()).Enabled()
}

// Demo is the embedded demo's sample LMS, started and registered when cfg
// gets one.
func (Module) Demo(cfg config.Config, tool string) (config.Config, *wayin.Demo, error) {
	if !sampleLMSOn(cfg) {
		return cfg, nil, nil
	}
	cfg, running, err := startSampleLMS(cfg, tool)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, &wayin.Demo{Name: "sample LMS", Note: "its course page launches with LTI 1.3, no password", Close: running.Close, Double: running,
		Listening: func(tool string) string {
			running.SetTool(tool)
			return running.URL() + samplelms.CoursePath
		}}, nil
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
	s := config.Settings(cfg, Section())
	s.Platforms = ConfiguredPlatforms{{Name: SampleLMSName, Issuer: SampleLMSIssuer, ClientID: sampleLMSClientID,
		DeploymentIDs: "demo", AuthURL: running.AuthURL(), JWKSURL: running.URL() + samplelms.JWKSPath, TokenURL: running.TokenURL(),
		CreateAccounts: true, EmailDomains: sampleLMSDomain,
		DeepLinkItems: []DeepLinkItem{{Title: "Make a trailer", Path: "/editor/templates/trailer"}}}}
	s.SampleLMS.Origin, s.SampleLMS.Issuer = Origin(running.URL()), SampleLMSIssuer
	return config.WithSettings(cfg, Section(), s), running, nil
}

// sampleLMSKey is the sample LMS's signing key, made once (0600; one
// that does not read as a key is made anew).
func sampleLMSKey(cfg config.Config) (*rsa.PrivateKey, error) {
	data, err := keptfile.Read(cfg.DataDir(), sampleLMSKeyFile,
		func(data []byte) bool { _, err := ParseRSAKey(data); return err == nil }, GenerateKeyPEM)
	if err != nil {
		return nil, err
	}
	return ParseRSAKey(data)
}
