/**
 * The services the features add to the service context
 * (src/feature-kit.ts `ServiceContext`), beside the platform's and the
 * identity core's: each feature declares its own members from its folder
 * (`declare module`), next to the service they name, as the owners of
 * tables declare their store areas (storage/tables.ts). So this file, and
 * the kit, name no feature.
 *
 * @public (reached by those declarations, not by an import)
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each feature's declaration merging.
export interface FeatureServices {}
