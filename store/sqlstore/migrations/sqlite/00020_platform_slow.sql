-- The platform's slowness, shared: an instance that saw a launch wait on
-- the platform past its patience tells every other until when the
-- platform is slow, so their launches go in line at once.

-- +goose Up
ALTER TABLE platform_pause ADD COLUMN slow_until BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE platform_pause DROP COLUMN slow_until;
