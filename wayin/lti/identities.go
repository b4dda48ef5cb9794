package lti

import (
	"context"
	"log/slog"
)

// MigrateIdentities moves the identities kept under an issuer alone
// (LegacySourceID, before an LMS was its (issuer, client_id)) to the
// source of that issuer's one registration. An issuer registered more
// than once cannot say whose its identities were: they stay, unused, and
// each person is linked again at their next launch where the LMS is
// trusted for their address; the log names the issuer. It runs at every
// start (instances of an older version may write the old form until they
// are replaced) and finds nothing to do once done.
func MigrateIdentities(ctx context.Context, platforms []Platform, move func(ctx context.Context, from, to string) (int64, error), logger *slog.Logger) error {
	clients := map[string][]string{}
	var issuers []string
	for _, p := range platforms {
		if _, seen := clients[p.Issuer]; !seen {
			issuers = append(issuers, p.Issuer)
		}
		clients[p.Issuer] = append(clients[p.Issuer], p.ClientID)
	}
	for _, iss := range issuers {
		if len(clients[iss]) != 1 {
			logger.Debug("LTI: an issuer registered more than once keeps no identities of the issuer alone; its people are linked again at their next launch",
				"issuer", iss, "client_ids", clients[iss])
			continue
		}
		n, err := move(ctx, LegacySourceID(iss), SourceID(iss, clients[iss][0]))
		if err != nil {
			return err
		}
		if n > 0 {
			logger.Info("LTI: identities moved to their LMS's (issuer, client_id)", "issuer", iss, "client_id", clients[iss][0], "identities", n)
		}
	}
	return nil
}
