/**
 * The app's pages and their addresses under /app: the server answers every /app path with the
 * same page (runtime/http/app-routes.ts), and this module reads which page the address names.
 */
export const APP_ROOT = '/app';

export type Route =
  | { readonly page: 'types' }
  | { readonly page: 'list'; readonly type: string; readonly query: string }
  | { readonly page: 'new'; readonly type: string }
  | { readonly page: 'resource'; readonly type: string; readonly id: string; readonly tab: Tab }
  | { readonly page: 'edit'; readonly type: string; readonly id: string }
  | { readonly page: 'bot'; readonly id: string }
  | { readonly page: 'not-found' };

export const TABS = ['details', 'json', 'history', 'references'] as const;
export type Tab = (typeof TABS)[number];

const TYPE = /^[A-Z][A-Za-z]+$/;
const ID = /^[A-Za-z0-9\-.]{1,64}$/;

export function routeOf(pathname: string, search: string): Route {
  const rest = pathname.startsWith(APP_ROOT) ? pathname.slice(APP_ROOT.length) : pathname;
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(search);
  const [type, id, action] = parts;
  if (parts.length === 0) return { page: 'types' };
  if (!TYPE.test(type)) return { page: 'not-found' };
  if (parts.length === 1) return { page: 'list', type, query: params.get('q') ?? '' };
  if (parts.length === 2 && id === 'new') return { page: 'new', type };
  if (!ID.test(id)) return { page: 'not-found' };
  if (parts.length === 2 && type === 'Bot' && !params.has('tab')) return { page: 'bot', id };
  if (parts.length === 2) {
    const tab = (TABS as readonly string[]).includes(params.get('tab') ?? '')
      ? (params.get('tab') as Tab)
      : 'details';
    return { page: 'resource', type, id, tab };
  }
  if (parts.length === 3 && action === 'edit') return { page: 'edit', type, id };
  return { page: 'not-found' };
}

export function hrefOf(route: Route): string {
  const path = (...parts: string[]) => [APP_ROOT, ...parts.map(encodeURIComponent)].join('/');
  switch (route.page) {
    case 'types':
    case 'not-found':
      return APP_ROOT;
    case 'list':
      return route.query
        ? `${path(route.type)}?${new URLSearchParams({ q: route.query })}`
        : path(route.type);
    case 'new':
      return path(route.type, 'new');
    case 'resource':
      return route.tab === 'details' && route.type !== 'Bot'
        ? path(route.type, route.id)
        : `${path(route.type, route.id)}?tab=${route.tab}`;
    case 'edit':
      return path(route.type, route.id, 'edit');
    case 'bot':
      return path('Bot', route.id);
  }
}

/** The app's page for a resource: a Bot's is its details view. */
export function resourceHref(type: string, id: string): string {
  return type === 'Bot'
    ? hrefOf({ page: 'bot', id })
    : hrefOf({ page: 'resource', type, id, tab: 'details' });
}
