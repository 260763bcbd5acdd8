# Sourced (from the repository's root) by the scripts that run Node: afterwards `node` is the
# Node that runs npm, the machine's. Under `npm run`, node_modules/.bin comes first on PATH, and
# the node24 devDependency links a Node 24 `node` there; where a script means Node 24 it calls
# it by path (node_modules/node24/bin/node). Outside npm, PATH is left as it is.
if [ -n "${npm_node_execpath:-}" ]; then
  mkdir -p target/host-node
  # Replaced in one rename, so that a script running at the same time always finds it.
  ln -sfn "$npm_node_execpath" "target/host-node/node.$$"
  mv -Tf "target/host-node/node.$$" target/host-node/node
  export PATH="$PWD/target/host-node:$PATH"
fi
