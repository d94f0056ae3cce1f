/**
 * The slice of the `oidc-provider` package (v9, ships no type declarations)
 * that test/support/oidc-provider.ts uses. Kept minimal on purpose: only what
 * the test OpenID provider calls, typed after the package's documentation.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface InteractionDetails {
    readonly uid: string;
    readonly grantId?: string;
    readonly params: Readonly<Record<string, unknown>>;
    readonly prompt: { readonly name: string; readonly details: Readonly<Record<string, unknown>> };
  }

  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export interface GrantConstructor {
    new (input: { accountId: string; clientId: string }): GrantInstance;
    find(id: string): Promise<GrantInstance | undefined>;
  }

  export class Provider {
    constructor(issuer: string, configuration: Readonly<Record<string, unknown>>);
    readonly issuer: string;
    readonly Grant: GrantConstructor;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Readonly<Record<string, unknown>>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default Provider;
}
