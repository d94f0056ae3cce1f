/**
 * How long sessions live, read by the JWT (its `exp`) and by the key ring (a
 * retired key stays published as long as a token it signed can live). Its
 * own module, so that neither of the two imports the other.
 */

/** A session row, and so a token, lives 30 days (docs/api.md Limits; docs/protocol.md §3). */
export const SESSION_LIFETIME_SECONDS = 30 * 24 * 60 * 60;
