/** The page an address names. */
import { useEffect } from 'react';
import type { Route } from '../lib/route.js';
import { BotDetails } from './BotDetails.js';
import { ResourceEditor } from './ResourceEditor.js';
import { ResourceList } from './ResourceList.js';
import { ResourceTypeList } from './ResourceTypeList.js';
import { ResourceView } from './ResourceView.js';

export function Page({ route }: { readonly route: Route }) {
  const title = titleOf(route);
  useEffect(() => {
    document.title = `${title} · Graphir`;
  }, [title]);
  switch (route.page) {
    case 'types':
      return <ResourceTypeList />;
    case 'list':
      return <ResourceList key={route.type} type={route.type} query={route.query} />;
    case 'new':
      return <ResourceEditor key={`new/${route.type}`} type={route.type} />;
    case 'edit':
      return <ResourceEditor key={`${route.type}/${route.id}`} type={route.type} id={route.id} />;
    case 'resource':
      return (
        <ResourceView
          key={`${route.type}/${route.id}`}
          type={route.type}
          id={route.id}
          tab={route.tab}
        />
      );
    case 'bot':
      return <BotDetails key={route.id} id={route.id} />;
    case 'not-found':
      return (
        <>
          <h1>Not found</h1>
          <p>The app has no page at this address.</p>
        </>
      );
  }
}

function titleOf(route: Route): string {
  switch (route.page) {
    case 'types':
      return 'Resources';
    case 'list':
      return route.type;
    case 'new':
      return `New ${route.type}`;
    case 'edit':
      return `Edit ${route.type}/${route.id}`;
    case 'resource':
      return `${route.type}/${route.id}`;
    case 'bot':
      return `Bot/${route.id}`;
    case 'not-found':
      return 'Not found';
  }
}
