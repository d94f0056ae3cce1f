/** The contact-form relay (docs/protocol.md §6 `/api/contact`) and its route. */
export {
  MAX_CONTACT_MESSAGE_LENGTH,
  MAX_CONTACT_NAME_LENGTH,
  MAX_CONTACT_SUBJECT_LENGTH,
  createContactRelay,
} from './contact.js';

export type { ContactInput, ContactRelay } from './contact.js';

export { registerContactRoutes } from './routes.js';
