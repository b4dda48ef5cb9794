package app

import (
	"errors"
	"slices"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/wayin"
)

// startDemos starts the samples the modules bring into the embedded demo
// (wayin.DemoRule), but those of the modules whose section skip names,
// and returns cfg as the bridge serves it with them. One that fails stops
// those started.
func startDemos(cfg config.Config, mods []wayin.Module, skip []string) (config.Config, []*wayin.Demo, error) {
	var demos []*wayin.Demo
	for _, m := range mods {
		r, ok := m.(wayin.DemoRule)
		if !ok || m.Section() != nil && slices.Contains(skip, config.SectionKey(m.Section())) {
			continue
		}
		next, d, err := r.Demo(cfg, cfg.PublicURL(cfg.Server.Addr))
		if err != nil {
			return cfg, nil, errors.Join(err, stopDemos(demos))
		}
		if d != nil {
			cfg, demos = next, append(demos, d)
		}
	}
	return cfg, demos, nil
}

// stopDemos stops demos.
func stopDemos(demos []*wayin.Demo) error {
	var errs []error
	for _, d := range demos {
		if d.Close != nil {
			errs = append(errs, d.Close())
		}
	}
	return errors.Join(errs...)
}

// WithDemos is cfg with the modules' demo samples started and set, as
// serve would (for a command that checks the configuration the demo
// serves); stop ends them. Each takes a free port, so this works beside a
// running demo.
func WithDemos(cfg config.Config, mods []wayin.Module) (_ config.Config, stop func() error, _ error) {
	cfg, demos, err := startDemos(cfg, mods, nil)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, func() error { return stopDemos(demos) }, nil
}
