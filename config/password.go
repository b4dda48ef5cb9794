package config

// Password is how local account passwords are hashed (argon2id).
type Password struct {
	Argon2MemoryKiB   uint32 `yaml:"argon2_memory_kib"`
	Argon2Iterations  uint32 `yaml:"argon2_iterations"`
	Argon2Parallelism uint8  `yaml:"argon2_parallelism"`
	HashConcurrency   int    `yaml:"hash_concurrency"` // hashes computed at once; more wait
}

// validatePassword checks the hashing settings.
func (c *Config) validatePassword(bad func(key, problem string)) {
	pw := c.Password
	if pw.Argon2MemoryKiB < 64 || pw.Argon2MemoryKiB > 1<<20 {
		bad("password.argon2_memory_kib", "use 64 to 1048576 (19456 is the recommended minimum in production)")
	}
	if pw.Argon2Iterations < 1 || pw.Argon2Iterations > 20 {
		bad("password.argon2_iterations", "use 1 to 20")
	}
	if pw.Argon2Parallelism < 1 {
		bad("password.argon2_parallelism", "use 1 or more")
	}
	if pw.HashConcurrency < 1 || pw.HashConcurrency > 256 {
		bad("password.hash_concurrency", "use 1 to 256 (the number of cores is a good value)")
	}
}
