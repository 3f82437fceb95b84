/** The commands' services, imported on first use (see `command-services.ts`). */
export const services = () => import('./command-services.ts');
