// Made-up customers and items for the orders the demo places.

const names = [
  "Ada",
  "Grace",
  "Linus",
  "Barbara",
  "Ken",
  "Margaret",
  "Dennis",
  "Frances",
  "Edsger",
  "Radia",
  "Donald",
  "Hedy",
  "Alan",
  "Katherine",
  "Tony",
  "Sophie",
  "Niklaus",
  "Annie",
  "John",
  "Shafi",
];
const surnames = [
  "Lovelace",
  "Hopper",
  "Torvalds",
  "Liskov",
  "Thompson",
  "Hamilton",
  "Ritchie",
  "Allen",
  "Dijkstra",
  "Perlman",
  "Knuth",
  "Lamarr",
  "Turing",
  "Johnson",
  "Hoare",
  "Wilson",
  "Wirth",
  "Easley",
  "Backus",
  "Goldwasser",
];
const items = [
  ["Espresso beans", 14.5],
  ["Desk lamp", 39],
  ["Mechanical keyboard", 129],
  ["Notebook", 6.9],
  ["Headphones", 89],
  ["Plant pot", 12],
  ["Teapot", 27.5],
  ["Bike light", 19.9],
  ["Backpack", 64],
  ["Board game", 34.99],
];

const pick = (list) => list[Math.floor(Math.random() * list.length)];

export const randomCustomer = () => `${pick(names)} ${pick(surnames)}`;

/** A random [item, price]. */
export const randomItem = () => pick(items);
