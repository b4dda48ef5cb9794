-- One platform user is linked to one account at most. A platform user
-- linked to several accounts (a platform that handed an id out again,
-- or the demo's emulator before it kept its users) cannot tell which of
-- them is its person: every such link is dropped, and each account's
-- next launch finds its own platform user by its address.

-- +goose Up
DELETE FROM links WHERE platform_user_id IN (
    SELECT platform_user_id FROM links GROUP BY platform_user_id HAVING COUNT(*) > 1
);
CREATE UNIQUE INDEX links_platform_user ON links (platform_user_id);

-- +goose Down
DROP INDEX links_platform_user;
