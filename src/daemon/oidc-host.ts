import { createOidcLogin, oidcFingerprint } from '../auth/oidc.ts';
import type { SessionStore } from '../auth/sessions.ts';
import type { ResolvedConfig } from '../config/resolved.ts';
import { answerCap } from '../config/sections/answers.ts';

/**
 * Dashboard login through OpenID Connect (`Users.Oidc`): a reload that changes the provider or client, or turns it
 * off, ends the sessions opened through the old one.
 */
export function hostOidc(config: () => ResolvedConfig, sessions: SessionStore) {
  const login = createOidcLogin({
    setup: () => {
      const c = config();
      const settings = c.settings.Users.Oidc;
      return settings === undefined ? undefined : { settings, secret: c.oidcClientSecret };
    },
    cap: () => answerCap(config().settings.Answers, 'Oidc'),
  });
  return {
    login,
    reconfigured(next: ResolvedConfig) {
      const settings = next.settings.Users.Oidc;
      const now = settings === undefined ? undefined : oidcFingerprint(settings);
      sessions.endWhere((s) => s.kind === 'sso' && s.fingerprint !== now);
    },
  };
}
