/**
 * The OpenID provider's clients as an operator manages them from the admin
 * API (docs/api.md "Admin"): the same registry `oc-host oidc clients` uses,
 * every change written to the audit log before it is answered. A secret is
 * in the answer that makes it and nowhere else, the audit log included.
 */
import { OcError } from '../../platform/errors.js';
import type { ClientEdit, ClientInput, ClientView, IssuedClient, OidcService } from '../oidc/index.js';
import type { Actor, OperatorService } from './operators.js';

export interface AdminClientsDeps {
  readonly oidc: Pick<OidcService, 'clients'>;
  readonly operators: Pick<OperatorService, 'audit'>;
}

/** The target an audit entry names for a client. */
function target(clientId: string): string {
  return `client:${clientId}`;
}

export class AdminClients {
  readonly #deps: AdminClientsDeps;

  constructor(deps: AdminClientsDeps) {
    this.#deps = deps;
  }

  /** Every client, the operator's own and the Connect apps'. */
  list(): Promise<ClientView[]> {
    return this.#deps.oidc.clients.list();
  }

  /** Registers one of the operator's own clients; audited as `client.create` (without the secret). */
  async create(input: ClientInput, firstParty: boolean, actor: Actor): Promise<IssuedClient> {
    const issued = await this.#deps.oidc.clients.create(input, { ownerAppId: null, firstParty });
    await this.#deps.operators.audit(actor, {
      action: 'client.create',
      target: target(issued.client_id),
      detail: { name: input.client_name, first_party: firstParty },
    });
    return issued;
  }

  /** A new secret; the old one stops working at once. Audited as `client.rotate`. */
  async rotateSecret(clientId: string, reason: string | null, actor: Actor): Promise<IssuedClient> {
    const issued = await this.#deps.oidc.clients.rotateSecret(clientId);
    await this.#deps.operators.audit(actor, { action: 'client.rotate', target: target(clientId), reason });
    return issued;
  }

  /** Whether the client skips the consent screen; audited as `client.first_party`. */
  async setFirstParty(clientId: string, firstParty: boolean, actor: Actor): Promise<ClientView> {
    const client = await this.#deps.oidc.clients.setFirstParty(clientId, firstParty);
    await this.#deps.operators.audit(actor, {
      action: 'client.first_party',
      target: target(clientId),
      detail: { first_party: firstParty },
    });
    return client;
  }

  /** Changes its redirect URIs, name, logo and other links; audited as `client.edit` with the names of what changed (the values are in the client). */
  async edit(clientId: string, changes: ClientEdit, actor: Actor): Promise<ClientView> {
    const client = await this.#deps.oidc.clients.edit(clientId, changes);
    const changed = Object.keys(changes).filter((name) => changes[name as keyof ClientEdit] !== undefined);
    await this.#deps.operators.audit(actor, { action: 'client.edit', target: target(clientId), detail: { changed } });
    return client;
  }

  /**
   * Holds the client, so that it can start no sign-in and redeem no code or
   * token, or lifts the hold; audited as `client.disable` or `client.enable`
   * when it changed anything.
   */
  async setDisabled(clientId: string, disabled: boolean, reason: string | null, actor: Actor): Promise<ClientView> {
    const { client, changed } = await this.#deps.oidc.clients.setDisabled(clientId, disabled);
    if (changed)
      await this.#deps.operators.audit(actor, { action: disabled ? 'client.disable' : 'client.enable', target: target(clientId), reason });
    return client;
  }

  /** Deletes the client, its consents and every code and token it holds; audited as `client.delete`. */
  async remove(clientId: string, reason: string, actor: Actor): Promise<void> {
    if (!(await this.#deps.oidc.clients.remove(clientId))) throw new OcError('not_found', 'admin: no such client');
    await this.#deps.operators.audit(actor, { action: 'client.delete', target: target(clientId), reason });
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The OpenID clients as an operator manages them. */
    readonly adminClients: AdminClients;
  }
}
