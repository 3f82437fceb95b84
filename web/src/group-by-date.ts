/** Sidebar groups by last update: Today, Yesterday, Previous 7 days, Older (local time). */
export function dateGroup(iso: string, now = new Date()): 'Today' | 'Yesterday' | 'Previous 7 days' | 'Older' {
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const time = new Date(iso).getTime();
  if (time >= startOfToday) return 'Today';
  if (time >= startOfToday - 86_400_000) return 'Yesterday';
  if (time >= startOfToday - 7 * 86_400_000) return 'Previous 7 days';
  return 'Older';
}

export function groupByDate<T extends { updatedAt: string }>(items: T[], now = new Date()): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = dateGroup(item.updatedAt, now);
    groups.set(group, [...(groups.get(group) ?? []), item]);
  }
  return ['Today', 'Yesterday', 'Previous 7 days', 'Older']
    .filter((name) => groups.has(name))
    .map((name) => [name, groups.get(name)!]);
}

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}
