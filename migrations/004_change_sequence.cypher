// The single counter that hands out gap-free change-feed sequence numbers.
MERGE (c:ChangeSequence {name: 'changes'}) ON CREATE SET c.value = 0;
