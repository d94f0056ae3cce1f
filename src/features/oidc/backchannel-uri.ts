/**
 * Why a client's `backchannel_logout_uri` cannot be used, or null: logouts go
 * out under the webhook endpoint rules (docs/protocol.md §8 "Logout"), so the
 * service and the operator's `oidc` commands refuse the same addresses.
 */
import type { Config } from '../../platform/config.js';
import { isOcError } from '../../platform/errors.js';
import { checkWebhookUrl, isDevelopmentUrl } from '../connect/index.js';

export function backchannelUriChecker(config: Pick<Config, 'publicUrl' | 'webhookAllowPrivate'>): (uri: string) => string | null {
  const rules = { development: isDevelopmentUrl(config.publicUrl), allowPrivate: config.webhookAllowPrivate };
  return (uri) => {
    try {
      checkWebhookUrl(uri, rules);
      return null;
    } catch (error) {
      if (isOcError(error)) return (error.detail ?? error.code).replace(/^webhook: /, '');
      throw error;
    }
  };
}
