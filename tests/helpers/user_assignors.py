"""User assignors for the tests, as the source of a module the tests write into a
throwaway project: a correct one (`RoundRobinish`, range's contract declared), a broken one
(`Greedy`, I1) and malformed ones, each wrong in one attribute of the assignor protocol."""

SOURCE = '''
from groupcheck.impl.types import Assignment, RebalanceProtocol


class RoundRobinish:
    """Deals each topic's partitions over its subscribers in member-id order: each topic is
    split evenly, the group as a whole need not be (the range contract)."""

    name = "my-assignor"
    supported_protocols = (RebalanceProtocol.EAGER,)
    balance = "range"

    def assign(self, cluster, subscriptions):
        out = {m: [] for m in subscriptions}
        members = sorted(subscriptions)
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            takers = [m for m in members if topic in subscriptions[m].topics]
            for p in range(cluster.partitions.get(topic, 0)):
                out[takers[p % len(takers)]].append((topic, p))
        return {m: Assignment(ps) for m, ps in out.items()}

    def on_assignment(self, assignment, generation):
        pass

    def subscription_user_data(self, topics):
        return None


class Greedy(RoundRobinish):
    """Broken: the last member also takes the first member's first partition."""

    def assign(self, cluster, subscriptions):
        out = super().assign(cluster, subscriptions)
        members = sorted(out)
        if len(members) > 1 and out[members[0]].partitions:
            out[members[-1]].partitions.append(out[members[0]].partitions[0])
        return out


class Strings(RoundRobinish):
    supported_protocols = ("EAGER",)


class NoName(RoundRobinish):
    name = None


class ListAnswer(RoundRobinish):
    def assign(self, cluster, subscriptions):
        return [("t0", 0)]


class PlainLists(RoundRobinish):
    def assign(self, cluster, subscriptions):
        return {m: [("t0", 0)] for m in subscriptions}


class NotAMethod(RoundRobinish):
    on_assignment = 3


class BadContract(RoundRobinish):
    balance = "even"
'''
