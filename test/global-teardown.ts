export default async function globalTeardown(): Promise<void> {}
