"""mdtest's namespace as data: how many directories a tree of depth -z and fan-out -b holds,
how -n and -I become items per directory, and the path of every item a rank makes. Pure
arithmetic, so the names are mdtest's own (mdtest.c's create_remove_items and mdtest_stat)."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.errors import SpecError

#: The directory every run's namespace lives under, on the target (mdtest's test-dir.0-0).
TOP = "hpcio-mdtest"


def tree_dirs(depth: int, branch: int) -> int:
    """Directories in one tree: 1 + b + b^2 + ... + b^depth (mdtest's num_dirs_in_tree)."""
    return sum(branch**level for level in range(depth + 1))


@dataclass(frozen=True, slots=True)
class Tree:
    """One iteration's namespace: a tree per rank (mdtest -u) or one shared by every rank,
    `items_per_dir` files (and directories) of each rank in each of its directories."""

    depth: int
    branch: int
    items_per_dir: int
    dir_per_rank: bool

    @staticmethod
    def of(items: int, items_per_dir: int, depth: int, branch: int, dir_per_rank: bool) -> Tree:
        """mdtest's sizing: -I fixes the items per directory (and -n follows), else -n is
        divided among the tree's directories and rounded down to a multiple of them.

        Raises:
            SpecError: fewer items than directories.
        """
        dirs = tree_dirs(depth, branch)
        per_dir = items_per_dir or items // dirs
        if per_dir < 1:
            raise SpecError(
                f"--items {items} is fewer than the tree's {dirs} directories "
                f"(--depth {depth}, --branch {branch}): give at least --items {dirs}"
            )
        return Tree(depth, branch, per_dir, dir_per_rank)

    @property
    def dirs(self) -> int:
        return tree_dirs(self.depth, self.branch)

    @property
    def items(self) -> int:
        """Items (files, or directories) each rank makes."""
        return self.items_per_dir * self.dirs

    def base(self, rank: int) -> str:
        """The tree's name stem: one tree per rank (-u), or one shared by all."""
        return f"mdtest_tree.{rank}" if self.dir_per_rank else "mdtest_tree"

    def dir_path(self, rank: int, index: int) -> str:
        """Tree directory `index` (0 the root; the children of k are k*b+1 .. k*b+b), from
        TOP: 'mdtest_tree.0/mdtest_tree.2/mdtest_tree.5'."""
        base = self.base(rank)
        chain = []
        while index > 0:
            chain.append(f"{base}.{index}")
            index = (index - 1) // self.branch
        chain.append(f"{base}.0")
        return "/".join(reversed(chain))

    def tree_paths(self, rank: int) -> list[str]:
        """Every directory of the tree `rank` makes, parents first (the shared tree is rank
        0's to make)."""
        return [self.dir_path(rank, index) for index in range(self.dirs)]

    def makes_tree(self, rank: int) -> bool:
        return self.dir_per_rank or rank == 0

    def item_paths(self, rank: int, kind: str) -> list[str]:
        """The `kind` ('file' or 'dir') items `rank` makes, in mdtest's order: item n in tree
        directory n // items_per_dir, named '{kind}.mdtest.{rank}.{n}'."""
        dirs = [self.dir_path(rank, index) for index in range(self.dirs)]
        per_dir = self.items_per_dir
        return [f"{dirs[n // per_dir]}/{kind}.mdtest.{rank}.{n}" for n in range(self.items)]
