-- 0015 totp_last_step: sys_user.totp_last_step, the last TOTP time step accepted (a code of that step or an older one is refused).
-- (ent's Schema.WriteTo against an empty PostgreSQL database with migrations 1-14 applied.)
-- adminkernel:expand
ALTER TABLE "sys_user" ADD COLUMN "totp_last_step" bigint NOT NULL DEFAULT 0;
