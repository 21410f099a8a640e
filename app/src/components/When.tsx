/** An instant as the reader's local date and time, with the exact value a hover away. */
export function When({ instant }: { readonly instant: string | undefined }) {
  if (!instant) return null;
  const date = new Date(instant);
  if (Number.isNaN(date.getTime())) return <>{instant}</>;
  return (
    <time dateTime={instant} title={instant}>
      {date.toLocaleString()}
    </time>
  );
}
