-- 0016 user_phone_unique: UNIQUE(phone, delete_key) on sys_user, at most one live user per phone (SMS login).
-- (ent's Schema.WriteTo against an empty Sqlite database with migrations 1-15 applied.)
-- Go data step before it (host/database/phone.go): blank phones become NULL; live users sharing a phone stop the migration.
-- Expand: the unique index refuses only what this release forbids (an older binary's second live user with one phone; migrations/additive.go reviewedUniqueIndexes).
-- adminkernel:expand
CREATE UNIQUE INDEX `sysuser_phone_delete_key` ON `sys_user` (`phone`, `delete_key`);
