"""A plain PyTorch image-classification training script, as users write them: torchvision's
ImageFolder with the usual augmentations, a DataLoader, a small CNN, SGD. Nothing in it knows
about mmprof; `mmprof baseline -- python3 examples/train_imagefolder.py DATA` measures it.

    python3 examples/train_imagefolder.py DATA_ROOT [--epochs N] [--batch-size B] [--workers W]
"""
import argparse
import time

import torch
import torch.nn as nn
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--size", type=int, default=128)
    args = p.parse_args()

    transform = T.Compose([
        T.RandomResizedCrop(args.size),
        T.RandomHorizontalFlip(),
        T.ToTensor(),
        T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    dataset = ImageFolder(args.root, transform=transform)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, pin_memory=torch.cuda.is_available(),
                        persistent_workers=args.workers > 0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, len(dataset.classes)),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        t0, seen = time.perf_counter(), 0
        for images, labels in loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            seen += images.shape[0]
        print("epoch %d: %d images in %.1f s, loss %.3f"
              % (epoch, seen, time.perf_counter() - t0, loss.item()))


if __name__ == "__main__":
    main()
