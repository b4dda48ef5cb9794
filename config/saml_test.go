package config

import "testing"

func TestSAMLRefusals(t *testing.T) {
	assertRefused(t, []refusal{
		{"saml metadata twice", "saml:\n  idp_metadata_url: https://idp.example/md\n  idp_metadata_file: /etc/hosts\n", nil, "saml.idp_metadata_url", "not both"},
		{"saml metadata over http", "saml:\n  idp_metadata_url: http://idp.example/md\n", nil, "saml.idp_metadata_url", "https URL"},
		{"saml metadata file missing", "saml:\n  idp_metadata_file: /nonexistent/idp.xml\n", nil, "saml.idp_metadata_file", "cannot read"},
		{"saml email domain with an @", "saml:\n  idp_metadata_url: https://idp.example/md\n  email_domains: partner.example kim@school.test\n", nil, "saml.email_domains", `"kim@school.test" is not a domain`},
		{"saml refresh too often", "saml:\n  idp_metadata_url: https://idp.example/md\n  metadata_refresh: 5s\n", nil, "saml.metadata_refresh", "1m to 24h"},
		{"saml certificate without its key", "saml:\n  idp_metadata_url: https://idp.example/md\n  sp_cert_file: /etc/hosts\n", nil, "saml.sp_cert_file", "both"},
		{"saml no display name", "saml:\n  idp_metadata_url: https://idp.example/md\n  display_name: \" \"\n", nil, "saml.display_name", "sign-in button"},
	})
}
